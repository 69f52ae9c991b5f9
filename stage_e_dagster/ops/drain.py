"""`drain_stream`: the op of the `stream_drain` job (`jobs.py`), one draining run (`control/drain.py`).

It claims the owed cards batch after batch and runs each claim as its own `micro_batch` run in this process (tagged
`stage_e/drain_run` with this run's id), syncing changed local sources itself in between, with the OCR workers kept
warm from claim to claim. Its output metadata says how many claims and cards it took, how they ended and why it
stopped.

The op is made by `drain_op` for the job it runs each claim as: `jobs.py` hands it `micro_batch`, and the op resolves
that job by its name over the three stage assets with this run's own resources. So this module never imports the
jobs (they are above it).
"""

# No `from __future__ import annotations`: Dagster resolves the op's resource annotations at runtime.
from contextlib import ExitStack
from typing import Any

from dagster import (
    Definitions,
    JobDefinition,
    MetadataValue,
    Nothing,
    OpDefinition,
    OpExecutionContext,
    Out,
    Output,
    op,
)

from stage_e_dagster.assets.stage_c import image_evidence
from stage_e_dagster.assets.stage_d import printing_votes
from stage_e_dagster.assets.stage_e import dispatch_outcome
from stage_e_dagster.control.drain import DrainLimits, drain
from stage_e_dagster.control.gates import halt_reason
from stage_e_dagster.control.intake import sync_changed
from stage_e_dagster.control.run_queue import surplus_drain
from stage_e_dagster.host import process_owner
from stage_e_dagster.in_process import claim, run_claim
from stage_e_dagster.job_contracts import TAG_DRAIN_RUN, TAG_OWNER, BatchSpec
from stage_e_dagster.resources.consensus import Consensus
from stage_e_dagster.resources.database import AppDatabase
from stage_e_dagster.resources.envelope import Envelope
from stage_e_dagster.resources.ocr_engine import OcrSettings
from stage_e_dagster.resources.ocr_slots import OcrSlots
from stage_e_dagster.resources.remote import RemoteFetch
from stage_e_dagster.resources.stream import StreamControl
from stage_e_dagster.workers.ocr_pool import keep_workers

TRIGGER = "card-event"
MODE = "passive"


class KeptWorkers:
    """OCR workers kept across a draining run's claims (`workers.ocr_crew.keep_workers`), released on demand."""

    def __init__(self, holder: str) -> None:
        self.holder = holder
        self._stack: ExitStack | None = None

    def ensure(self) -> None:
        if self._stack is None:
            self._stack = ExitStack()
            self._stack.enter_context(keep_workers(holder=self.holder))

    def release(self) -> None:
        if self._stack is not None:
            stack, self._stack = self._stack, None
            stack.close()


def drain_op(micro_batch: Any) -> OpDefinition:
    """The `drain_stream` op, running each claim as the asset job `micro_batch` (`define_asset_job`'s result, resolved
    by its name over the stage assets and bound to the draining run's own resources)."""

    @op(name="drain_stream", out=Out(Nothing), description="Claims owed cards batch after batch and runs each claim "
        "as a micro_batch run in this process, until the stream is idle.")
    def drain_stream(context: OpExecutionContext, database: AppDatabase, stream: StreamControl, ocr_slots: OcrSlots,
                     ocr: OcrSettings, envelope: Envelope, consensus: Consensus, remote: RemoteFetch):
        # The stage resources are not used here: each claim's micro_batch run gets exactly this run's resources.
        job = _bound(micro_batch, database=database, stream=stream, ocr_slots=ocr_slots, ocr=ocr, envelope=envelope,
                     consensus=consensus, remote=remote)
        yield from _drain(context, database, stream, job)

    return drain_stream


def _drain(context: OpExecutionContext, database: AppDatabase, stream: StreamControl, job: JobDefinition):
    engine, instance, owner = database.engine, context.instance, process_owner()
    instance.add_run_tags(context.run_id, {TAG_OWNER: owner})  # the reaper's way to see this process die
    if surplus_drain(instance, context.run_id, stream.drain_runs):
        context.log.info(f"more than STAGE_E_DRAIN_RUNS={stream.drain_runs} draining run(s) were asked for at once; "
                         "this one ends, the older ones take the owed cards")
        yield Output(None, metadata={"claims": 0, "cards": 0, "statuses": MetadataValue.json({}),
                                     "files_synced": 0, "ended": "surplus"})
        return
    limits = DrainLimits(idle_seconds=stream.drain_idle_seconds, max_seconds=stream.drain_max_seconds,
                         worker_grace_seconds=stream.worker_grace_seconds, watch_seconds=stream.drain_watch_seconds)

    def take():
        return claim(engine, instance, trigger=TRIGGER, mode=MODE, limit=stream.batch_size, owner=owner)

    def run(claimed):
        spec = BatchSpec(claimed.card_ids, trigger=TRIGGER, mode=MODE)
        status, _ = run_claim(job, instance, engine, claimed, spec, tags={TAG_DRAIN_RUN: context.run_id})
        return status

    def watch() -> int:
        intake = sync_changed(engine, stream.inbox_read_limit)
        if intake.synced:
            context.log.info(intake.describe())
        return intake.files_read

    summary = drain(claim=take, run_claim=run, halt_reason=lambda: halt_reason(engine, stream.enabled), watch=watch,
                    workers=KeptWorkers(holder=f"drain-{context.run_id[:8]}"), limits=limits, log=context.log.info)
    context.log.info(summary.line())
    yield Output(None, metadata={
        "claims": summary.claims,
        "cards": summary.cards,
        "statuses": MetadataValue.json(dict(summary.statuses)),
        "files_synced": summary.synced_files,
        "ended": summary.ended,
    })


def _bound(micro_batch: Any, **resources: Any) -> JobDefinition:
    """The job `micro_batch` over the three stage assets, bound to `resources`."""
    defs = Definitions(assets=[image_evidence, printing_votes, dispatch_outcome], jobs=[micro_batch],
                       resources=resources)
    return defs.resolve_job_def(micro_batch.name)
