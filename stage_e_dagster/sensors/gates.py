"""The gates the card stream and the backstop sweep share: what may start now, and what is already under way.

Nothing starts while streaming is switched off or any envelope trip is open; no new run is requested while the run
queue is full (backpressure); and no card already in a queued or started `micro_batch` run is asked for again.
"""

from __future__ import annotations

import time

from dagster import DagsterInstance, DagsterRunStatus, RunsFilter

from stage_e_dagster.db.runs import ledger
from stage_e_dagster.db.runs.ledger import LedgerRow
from stage_e_dagster.db.runs.trips import open_trips
from stage_e_dagster.jobs import MICRO_BATCH, batch_from_run_config
from stage_e_dagster.resources.stream import StreamControl

WAITING_STATUSES = [DagsterRunStatus.QUEUED, DagsterRunStatus.NOT_STARTED, DagsterRunStatus.STARTING]
"""Run statuses that count as waiting in the queue for backpressure."""
ACTIVE_STATUSES = [*WAITING_STATUSES, DagsterRunStatus.STARTED]


def halt_reason(url: str, stream: StreamControl) -> str | None:
    """Why nothing may start now (streaming disabled, an open envelope trip), or None when work may start."""
    if not stream.enabled:
        return "streaming is disabled (StreamControl.enabled is false)"
    trips = open_trips(url)
    if trips:
        first = trips[0]
        more = f" (and {len(trips) - 1} more)" if len(trips) > 1 else ""
        return (
            f"envelope trip {first.id} is open{more}: bar {first.bar} tripped by run {first.run_id}; "
            "nothing starts until an operator acknowledges it"
        )
    return None


def run_start_gate(url: str, mode: str, stream: StreamControl, trip_override: str | None = None) -> str | None:
    """Why a run must stop before any work (None: it may go on). A passive run obeys the stream's gates; a bulk
    run only refuses an open trip, unless the operator overrode it with a note."""
    if mode == "passive":
        return halt_reason(url, stream)
    trips = open_trips(url)
    if trips and not (trip_override or "").strip():
        return (f"envelope trip {trips[0].id} is open: acknowledge it (stage-e trips ack) or start the bulk run "
                "with --override-trip NOTE")
    return None


ENDED_STATUSES = [DagsterRunStatus.SUCCESS, DagsterRunStatus.FAILURE, DagsterRunStatus.CANCELED]
ENDED_GRACE_SECONDS = 60.0
"""A run that ended this long ago with its ledger row still `running` is reclaimed (the run-failure sensor, which
records a better reason and any trip, had its chance)."""


def reclaim_dead_batches(instance: DagsterInstance | None, url: str, max_age_seconds: float) -> list[LedgerRow]:
    """Close as `failed` the `running` ledger rows whose batch died: no heartbeat for `max_age_seconds`, or (with
    an instance) a Dagster run that ended. Their unfinished cards are offered again after their retry wait."""
    ended: list[str] = []
    if instance is not None:
        fail_unopened_runs(instance, url, max_age_seconds)
    alive = ledger.running(url)
    if instance is not None and alive:
        records = instance.get_run_records(RunsFilter(run_ids=[row.run_id for row in alive], statuses=ENDED_STATUSES))
        cutoff = time.time() - ENDED_GRACE_SECONDS
        ended = [r.dagster_run.run_id for r in records if r.end_time is not None and r.end_time < cutoff]
    if not alive:
        return []
    reaped = ledger.reap(url, max_age_seconds, ended)
    if instance is not None and reaped:
        fail_stranded_runs(instance, reaped)
    return reaped


def fail_unopened_runs(instance: DagsterInstance, url: str, max_age_seconds: float) -> None:
    """Fail the `micro_batch` runs that Dagster has called started for over `max_age_seconds` and that never
    opened their ledger row: their process died before (it lost the database, or was killed), so no heartbeat or
    ledger row will ever show it. The run-failure sensor then writes their row `failed` and offers their cards
    again; left alone, Dagster would hold those cards as busy until `max_runtime_seconds`."""
    cutoff = time.time() - max_age_seconds
    records = instance.get_run_records(RunsFilter(job_name=MICRO_BATCH, statuses=[DagsterRunStatus.STARTED]),
                                       limit=200)
    old = {r.dagster_run.run_id: r for r in records if r.start_time is not None and r.start_time < cutoff}
    for run_id in ledger.unknown_run_ids(url, old):
        _report_failed(instance, old[run_id].dagster_run,
                       f"abandoned: started over {max_age_seconds:g} s ago and never opened its ledger row (its "
                       "process died: killed run, lost database or host)")


def _report_failed(instance: DagsterInstance, run, reason: str) -> None:
    """Mark `run` failed in Dagster with `reason` as its error, which the run-failure sensor records unchanged."""
    from dagster._core.events import JobFailureData
    from dagster._utils.error import SerializableErrorInfo

    error = SerializableErrorInfo(reason, [], "BatchReclaimed")
    instance.report_run_failed(run, message=f"stage-e reclaimed this run's batch: {reason}",
                               job_failure_data=JobFailureData(error=error, failure_reason=None))


def fail_stranded_runs(instance: DagsterInstance, reaped: list[LedgerRow]) -> None:
    """Mark failed, in Dagster, the runs of reclaimed batches that it still calls started: their process died
    where Dagster could not record it (it lost the database, or ran in-process and was killed). Left `STARTED`
    they would hold their places under the run queue's concurrency limits until `max_runtime_seconds`, so the
    reclaimed cards' new runs would wait behind them. The failure carries the ledger's reason, which the
    run-failure sensor then records unchanged."""
    reasons = {row.run_id: row.failure_reason or "batch reclaimed" for row in reaped}
    stranded = instance.get_run_records(RunsFilter(run_ids=list(reasons), statuses=[
        DagsterRunStatus.STARTED, DagsterRunStatus.STARTING]))
    for record in stranded:
        _report_failed(instance, record.dagster_run, reasons[record.dagster_run.run_id])


def queued_runs(instance: DagsterInstance) -> int:
    """Micro-batch runs waiting to start (queued, not started, starting)."""
    return instance.get_runs_count(RunsFilter(job_name=MICRO_BATCH, statuses=WAITING_STATUSES))


def busy_card_ids(instance: DagsterInstance, url: str, limit: int = 200) -> set[int]:
    """Cards already in a micro-batch run that is queued or under way; neither the stream nor the sweep asks
    for them again (the ledger only knows a batch once its run has started).

    A run Dagster still calls started whose ledger row is closed is not under way: an in-process run whose process
    was killed stays `STARTED` in run storage for ever, and its reclaimed cards must come back."""
    runs = instance.get_runs(RunsFilter(job_name=MICRO_BATCH, statuses=ACTIVE_STATUSES), limit=limit)
    closed = ledger.closed_run_ids(url, [run.run_id for run in runs if run.status == DagsterRunStatus.STARTED])
    return {card for run in runs if run.run_id not in closed
            for card in batch_from_run_config(run.run_config).card_ids}


def backpressure_reason(queued: int, stream: StreamControl) -> str:
    return (
        f"backpressure: {queued} {MICRO_BATCH} runs already wait in the queue "
        f"(max_queued_runs={stream.max_queued_runs})"
    )


def queue_depth(instance: DagsterInstance) -> dict[str, int]:
    """Micro-batch runs waiting to start (`queued`) and under way (`started`), as Dagster's run storage has them."""
    started = instance.get_runs_count(RunsFilter(job_name=MICRO_BATCH, statuses=[DagsterRunStatus.STARTED]))
    return {"queued": queued_runs(instance), "started": started}
