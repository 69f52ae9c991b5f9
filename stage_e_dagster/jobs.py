"""The jobs of the code location: `micro_batch` (one batch through Stage C, D and E), `stream_drain` (a draining
run: claims owed cards and runs each claim as a `micro_batch` run), `sync_sources` (the `card_sources` asset over
some or all sources), `invariant_checks` (every asset check) and `acknowledge_envelope_trip` (one trip acknowledged
from the UI).

Above the assets and ops: the asset jobs select their assets by key, and the op jobs wrap the ops. What a run is
given and tagged with (names, `BatchSpec`, `SyncSpec`, tags) is in `job_contracts.py`, below everything that reads
it. The draining run's op is handed `micro_batch` here (`ops/drain.drain_op`) and never imports this module.
"""

from __future__ import annotations

from dagster import AssetSelection, define_asset_job, in_process_executor, job

from stage_e_dagster.job_contracts import (
    CARD_SOURCES,
    INVARIANT_CHECKS,
    MICRO_BATCH,
    STAGE_ASSETS,
    STREAM_DRAIN,
    SYNC_SOURCES,
    TAG_JOB,
)
from stage_e_dagster.ops.acknowledge import acknowledge_trip
from stage_e_dagster.ops.drain import drain_op

micro_batch = define_asset_job(
    MICRO_BATCH,
    # The asset checks run in `invariant_checks` (on a schedule), not in every batch: they read whole tables.
    selection=AssetSelection.assets(*STAGE_ASSETS).without_checks(),
    # One process per run: stages hand data over through Postgres, and a killed run takes its OCR workers with it.
    executor_def=in_process_executor,
    tags={TAG_JOB: MICRO_BATCH},
    description="One micro-batch of cards through evidence (C), votes (D) and dispatch outcome (E).",
)

sync_sources = define_asset_job(
    SYNC_SOURCES,
    selection=AssetSelection.assets(CARD_SOURCES).without_checks(),
    executor_def=in_process_executor,
    tags={TAG_JOB: SYNC_SOURCES},
    description="Bring the card table in line with the source directories (new, changed and vanished files).",
)

invariant_checks = define_asset_job(
    INVARIANT_CHECKS,
    selection=AssetSelection.all_asset_checks(),
    executor_def=in_process_executor,
    tags={TAG_JOB: INVARIANT_CHECKS},
    description="Every asset check: the pipeline's invariants, checked against the whole database. A failed check "
                "fails the run.",
)


@job(description="Acknowledge an envelope trip (op config: trip_id, note).")
def acknowledge_envelope_trip() -> None:
    acknowledge_trip()


drain_stream = drain_op(micro_batch)


@job(description="A draining run: claims owed cards batch after batch and runs each claim as a micro_batch run, "
                 "until the stream is idle.", executor_def=in_process_executor, tags={TAG_JOB: STREAM_DRAIN})
def stream_drain() -> None:
    drain_stream()
