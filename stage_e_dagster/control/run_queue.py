"""What is already under way, as Dagster's run storage has it: waiting and started `micro_batch` runs and their cards.

Backpressure counts the waiting runs; the stream and the sweep never ask again for a card that a queued or started
run already holds (the ledger only knows a batch once its run has started).
"""

from __future__ import annotations

from dagster import DagsterInstance, DagsterRunStatus, RunsFilter
from sqlalchemy import Engine

from stage_e_dagster.db.runs import ledger
from stage_e_dagster.host import owner_is_gone
from stage_e_dagster.job_contracts import MICRO_BATCH, STREAM_DRAIN, TAG_OWNER, batch_from_run_config

WAITING_STATUSES = [DagsterRunStatus.QUEUED, DagsterRunStatus.NOT_STARTED, DagsterRunStatus.STARTING]
"""Run statuses that count as waiting in the queue for backpressure."""
ACTIVE_STATUSES = [*WAITING_STATUSES, DagsterRunStatus.STARTED]
ENDED_STATUSES = [DagsterRunStatus.SUCCESS, DagsterRunStatus.FAILURE, DagsterRunStatus.CANCELED]


def queued_runs(instance: DagsterInstance) -> int:
    """Micro-batch runs waiting to start (queued, not started, starting)."""
    return instance.get_runs_count(RunsFilter(job_name=MICRO_BATCH, statuses=WAITING_STATUSES))


def busy_card_ids(instance: DagsterInstance, engine: Engine, limit: int = 200) -> set[int]:
    """Cards already in a micro-batch run that is queued or under way; neither the stream nor the sweep asks
    for them again.

    A run Dagster still calls started whose ledger row is closed is not under way: an in-process run whose process
    was killed stays `STARTED` in run storage for ever, and its reclaimed cards must come back."""
    runs = instance.get_runs(RunsFilter(job_name=MICRO_BATCH, statuses=ACTIVE_STATUSES), limit=limit)
    with engine.connect() as conn:
        closed = ledger.closed_run_ids(conn, [run.run_id for run in runs if run.status == DagsterRunStatus.STARTED])
    return {card for run in runs if run.run_id not in closed
            for card in batch_from_run_config(run.run_config).card_ids}


def queue_depth(instance: DagsterInstance) -> dict[str, int]:
    """Micro-batch runs waiting to start (`queued`) and under way (`started`), as Dagster's run storage has them."""
    started = instance.get_runs_count(RunsFilter(job_name=MICRO_BATCH, statuses=[DagsterRunStatus.STARTED]))
    return {"queued": queued_runs(instance), "started": started}


def active_drains(instance: DagsterInstance) -> int:
    """Draining runs (`stream_drain`) queued or under way."""
    return instance.get_runs_count(RunsFilter(job_name=STREAM_DRAIN, statuses=ACTIVE_STATUSES))


def surplus_drain(instance: DagsterInstance, run_id: str, drain_runs: int) -> bool:
    """True when draining run `run_id` is not among the `drain_runs` oldest draining runs queued or under way (a
    draining run whose process is gone does not count).

    The `card_stream` and `source_inbox` sensors each ask for a draining run when cards are owed and none is under
    way; when both tick in the same moment, neither sees the other's run yet and both ask. The surplus run ends at
    its start instead of working beside the others, so at most `drain_runs` draining runs claim cards."""
    records = instance.get_run_records(RunsFilter(job_name=STREAM_DRAIN, statuses=ACTIVE_STATUSES), limit=200)
    alive = [r for r in records if not owner_is_gone(r.dagster_run.tags.get(TAG_OWNER))]
    ordered = [r.dagster_run.run_id for r in sorted(alive, key=lambda r: (r.create_timestamp, r.dagster_run.run_id))]
    return run_id in ordered and ordered.index(run_id) >= drain_runs
