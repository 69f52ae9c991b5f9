"""One simulated host for the two-hosts test: a process tree configured only by its environment
(`STAGE_E_OCR_HOST_ID`, `STAGE_E_OCR_SLOT_SCOPE`, `STAGE_E_OCR_MAX_SLOTS`, the database URLs, `DAGSTER_HOME`).

`python -m testkit.hosts --holders N [--batch IDS ...]`:

1. forks N holder processes; each takes one OCR slot through the resource the settings configure (trying once),
   reports whether it got one, and keeps it until released. The host prints `ready {"held": h, "refused": r}`
   once every holder has reported, waits for a line on stdin, then releases them all;
2. runs the real `micro_batch` job (the code location's definitions, as `stage-e run` does) once per `--batch`
   (comma-separated card ids), in this process against the Dagster storage in `DAGSTER_HOME`, and prints
   `runs {"<run id>": "<ledger status>", ...}`.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import multiprocessing as mp
import sys


def _hold(reports, release) -> None:
    from stage_e_dagster.resources.database import AppDatabase
    from stage_e_dagster.resources.ocr_slots import OcrSlots
    from stage_e_dagster.settings import Settings

    settings = dataclasses.replace(Settings.from_env(), ocr_wait_seconds=0.0)
    slots = OcrSlots.from_settings(settings, AppDatabase(database_url=settings.database_url))
    with slots.acquire(holder=f"{settings.ocr_host_id} holder") as held:
        reports.put(bool(held))
        if held:
            release.wait(60)


def hold_slots(count: int) -> None:
    import stage_e_dagster.resources.ocr_slots  # noqa: F401 - imported once here, not in every forked holder

    ctx = mp.get_context("fork")
    reports, release = ctx.Queue(), ctx.Event()
    holders = [ctx.Process(target=_hold, args=(reports, release), daemon=True) for _ in range(count)]
    for holder in holders:
        holder.start()
    got = [reports.get(timeout=60) for _ in holders]
    print("ready " + json.dumps({"held": sum(got), "refused": len(got) - sum(got)}), flush=True)
    sys.stdin.readline()
    release.set()
    for holder in holders:
        holder.join(30)


def run_batches(batches: list[list[int]]) -> None:
    from dagster import DagsterInstance

    from stage_e_dagster.db.core.engine import get_engine
    from stage_e_dagster.db.runs import ledger
    from stage_e_dagster.definitions import defs
    from stage_e_dagster.in_process import QUIET
    from stage_e_dagster.job_contracts import MICRO_BATCH, BatchSpec
    from stage_e_dagster.settings import Settings

    url = Settings.from_env().database_url
    job = defs.resolve_job_def(MICRO_BATCH)
    statuses = {}
    with DagsterInstance.get() as instance:
        for ids in batches:
            spec = BatchSpec(tuple(ids), trigger="manual", mode="passive")
            result = job.execute_in_process(run_config={**spec.run_config(), **QUIET}, instance=instance,
                                            tags=spec.tags(), raise_on_error=False)
            with get_engine(url).connect() as conn:
                row = ledger.get(conn, result.run_id)
            statuses[result.run_id] = row.status if row and result.success else "failed"
    print("runs " + json.dumps(statuses), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--holders", type=int, default=0)
    parser.add_argument("--batch", action="append", default=[])
    args = parser.parse_args()
    if args.holders:
        hold_slots(args.holders)
    if args.batch:
        run_batches([[int(i) for i in batch.split(",")] for batch in args.batch])


if __name__ == "__main__":
    main()
