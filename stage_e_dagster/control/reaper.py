"""The reaper: batches that died get a truthful `failed` row, and their cards come back.

A `running` ledger row is alive while it heartbeats. `reclaim_dead_batches` closes as `failed` every row whose
process on this host is gone, whose Dagster run ended, or that stayed silent past the reclaim age; their unfinished
cards are offered again after their retry wait. With a Dagster instance it also fails, in Dagster, the runs that
died where Dagster could not see it, so they stop holding places under the run queue's limits: batches' runs, and
draining runs whose process is gone (the stream starts no draining run while one reads as started).

Every caller goes through `reclaim_dead_batches`: the stream sensor each tick, `stage-e status` and `stage-e run`.
"""

from __future__ import annotations

import time

from dagster import DagsterInstance, DagsterRunStatus, RunsFilter
from sqlalchemy import Engine

from stage_e_dagster.control.dagster_api import report_run_failed
from stage_e_dagster.control.run_queue import ENDED_STATUSES
from stage_e_dagster.db.runs import ledger
from stage_e_dagster.db.runs.ledger import LedgerRow
from stage_e_dagster.host import owner_is_gone
from stage_e_dagster.job_contracts import MICRO_BATCH, STREAM_DRAIN, TAG_OWNER

ENDED_GRACE_SECONDS = 60.0
"""A run that ended this long ago with its ledger row still `running` is reclaimed: the run-failure sensor, which
records a better reason and any trip, had its chance."""


def reclaim_dead_batches(instance: DagsterInstance | None, engine: Engine, max_age_seconds: float
                         ) -> list[LedgerRow]:
    """Close as `failed` the `running` rows whose batch died; returns them. Without an instance only the ledger's
    own evidence counts (a gone process, a silent row)."""
    ended: list[str] = []
    if instance is not None:
        fail_unopened_runs(instance, engine, max_age_seconds)
        fail_dead_drains(instance)
    with engine.connect() as conn:
        alive = ledger.running(conn)
    if not alive:
        return []
    if instance is not None:
        records = instance.get_run_records(RunsFilter(run_ids=[row.run_id for row in alive], statuses=ENDED_STATUSES))
        cutoff = time.time() - ENDED_GRACE_SECONDS
        ended = [r.dagster_run.run_id for r in records if r.end_time is not None and r.end_time < cutoff]
    with engine.begin() as conn:
        reaped = ledger.reap(conn, max_age_seconds, ended)
    if instance is not None and reaped:
        fail_stranded_runs(instance, reaped)
    return reaped


def fail_unopened_runs(instance: DagsterInstance, engine: Engine, max_age_seconds: float) -> None:
    """Fail the `micro_batch` runs that Dagster has called started for over `max_age_seconds` and that never
    opened their ledger row: their process died before (it lost the database, or was killed), so no heartbeat or
    ledger row will ever show it. The run-failure sensor then writes their row `failed` and offers their cards
    again; left alone, Dagster would hold those cards as busy until `max_runtime_seconds`."""
    cutoff = time.time() - max_age_seconds
    records = instance.get_run_records(RunsFilter(job_name=MICRO_BATCH, statuses=[DagsterRunStatus.STARTED]),
                                       limit=200)
    old = {r.dagster_run.run_id: r for r in records if r.start_time is not None and r.start_time < cutoff}
    with engine.connect() as conn:
        unknown = ledger.unknown_run_ids(conn, old)
    for run_id in unknown:
        report_run_failed(instance, old[run_id].dagster_run,
                          f"abandoned: started over {max_age_seconds:g} s ago and never opened its ledger row (its "
                          "process died: killed run, lost database or host)")


def fail_dead_drains(instance: DagsterInstance) -> list[str]:
    """Fail the draining runs that Dagster calls started whose process on this host is gone; their run ids.

    A draining run's process records Dagster's end of it; when it dies with the database (or is killed while the
    database is away) nothing does, and the run reads as started until `max_runtime_seconds`: the stream, which
    starts no draining run while one is under way, would stall that long. Each draining run tags itself with its
    process (`TAG_OWNER`) once it runs; a run without the tag has not started its work yet and is left alone."""
    failed = []
    records = instance.get_run_records(RunsFilter(job_name=STREAM_DRAIN, statuses=[DagsterRunStatus.STARTED]),
                                       limit=200)
    for record in records:
        owner = record.dagster_run.tags.get(TAG_OWNER)
        if owner and owner_is_gone(owner):
            report_run_failed(instance, record.dagster_run, f"abandoned: the process running it ({owner}) is gone")
            failed.append(record.dagster_run.run_id)
    return failed


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
        report_run_failed(instance, record.dagster_run, reasons[record.dagster_run.run_id])
