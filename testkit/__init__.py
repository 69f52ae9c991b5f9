"""The test kit: the set-up that tests, drills and benchmarks share, written once.

- `server`: a real Postgres (a throwaway embedded server, scratch databases, migrated templates);
- `sql`: one statement on its own connection (`rows`, `scalar`, `execute`);
- `corpus`: a generated catalogue and scans, imported and ingested (in process, or through `stage-e`);
- `seed`: rows as ingest, Stage C and Stage D leave them, and the ledger and the trips read back;
- `jobs`: the production resources and the `micro_batch` job bound to a test database;
- `instance`: Dagster instances on dagster-postgres with the project's instance file; runs and sensor ticks;
- `live`: a throwaway STAGE_E_HOME and `stage-e dev` driven through GraphQL; `oracle`: what a finished pipeline
  must show; `processes`: leftover children and the environment restored after a test;
- `review`, `hosts`, `scale`, `stage_d_batch`, `calculators`: the review page's corpus and server, a simulated
  host process, the scale benchmarks' bulk seed, Stage D's synthetic batch, a trivial extra calculator;
- `stores`, `remote`, `remote_children`: an S3-compatible server (moto) and a manifest server on loopback with fault
  injection, remote sources registered, synced and fetched against a test database, and the processes that take
  limiter turns or fetch in parallel.

`setup()` is the one set-up a process that runs OCR itself calls first.
"""

from __future__ import annotations


def setup() -> None:
    """One OpenMP thread for Tesseract in this process and every process it starts (the setting the OCR workers
    run with); call it before any OCR engine loads."""
    from stage_e_dagster.runtime import limit_ocr_threads

    limit_ocr_threads()
