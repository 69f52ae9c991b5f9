"""The gates the card stream and the backstop sweep share: what may start now, and what is already under way.

Nothing starts while streaming is switched off or any envelope trip is open; no new run is requested while the run
queue is full (backpressure); and no card already in a queued or started `micro_batch` run is asked for again.
"""

from __future__ import annotations

from dagster import DagsterInstance, DagsterRunStatus, RunsFilter

from stage_e_dagster.db.trips import open_trips
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


def queued_runs(instance: DagsterInstance) -> int:
    """Micro-batch runs waiting to start (queued, not started, starting)."""
    return instance.get_runs_count(RunsFilter(job_name=MICRO_BATCH, statuses=WAITING_STATUSES))


def busy_card_ids(instance: DagsterInstance, limit: int = 200) -> set[int]:
    """Cards already in a micro-batch run that is queued or under way; neither the stream nor the sweep asks
    for them again (the ledger only knows a batch once its run has started)."""
    runs = instance.get_runs(RunsFilter(job_name=MICRO_BATCH, statuses=ACTIVE_STATUSES), limit=limit)
    return {card for run in runs for card in batch_from_run_config(run.run_config).card_ids}


def backpressure_reason(queued: int, stream: StreamControl) -> str:
    return (
        f"backpressure: {queued} {MICRO_BATCH} runs already wait in the queue "
        f"(max_queued_runs={stream.max_queued_runs})"
    )
