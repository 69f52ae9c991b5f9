"""A reclaimed batch whose Dagster run still reads STARTED (its process died where Dagster could not record it, e.g.
with the database) has that run failed too, so it no longer holds a place under the run queue's concurrency limits;
the run-failure sensor then records the ledger's own reason unchanged."""

from __future__ import annotations

import dagster as dg
from sqlalchemy import text

from stage_e_dagster.control import reaper
from stage_e_dagster.control.failures import classify_failure
from stage_e_dagster.db.runs import ledger
from testkit.instance import add_runs
from testkit.seed import seed_cards


def test_reclaiming_a_batch_fails_the_run_dagster_still_calls_started(db_url, db_engine, instance):
    ids = seed_cards(db_url, 2)
    add_runs(instance, dg.DagsterRunStatus.STARTED, 1, card_ids=tuple(ids))
    (run,) = instance.get_runs(dg.RunsFilter(statuses=[dg.DagsterRunStatus.STARTED]))
    with db_engine.begin() as conn:
        ledger.open_batch(conn, run.run_id, "card-event", "passive", ids)
    assert reaper.reclaim_dead_batches(instance, db_engine, 300) == []  # alive: nothing happens
    assert instance.get_run_by_id(run.run_id).status == dg.DagsterRunStatus.STARTED
    with db_engine.begin() as conn:
        conn.execute(text("UPDATE dispatch_ledger SET heartbeat_at = now() - interval '10 minutes'"))

    (row,) = reaper.reclaim_dead_batches(instance, db_engine, 300)
    assert row.run_id == run.run_id and row.status == "failed"
    assert instance.get_run_by_id(run.run_id).status == dg.DagsterRunStatus.FAILURE
    (failure,) = instance.all_logs(run.run_id, of_type=dg.DagsterEventType.RUN_FAILURE)
    assert classify_failure(failure.dagster_event).reason == row.failure_reason
    assert reaper.reclaim_dead_batches(instance, db_engine, 300) == []  # once
    assert len(instance.all_logs(run.run_id, of_type=dg.DagsterEventType.RUN_FAILURE)) == 1
