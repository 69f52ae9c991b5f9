"""A `running` ledger row proves it is alive; the reaper reclaims the ones whose batch died, and their cards come
back. Real Postgres, real processes, a real Dagster instance."""

from __future__ import annotations

import subprocess
import sys

import dagster as dg
from sqlalchemy import text

from stage_e_dagster.control import reaper, run_queue
from stage_e_dagster.db.core.engine import get_engine
from stage_e_dagster.db.runs import ledger
from stage_e_dagster.db.work.queue import cards_needing_work
from stage_e_dagster.host import host_id, owner_is_gone, process_owner
from testkit.instance import add_runs
from testkit.seed import seed_cards


def _age(url: str, run_id: str, minutes: int) -> None:
    with get_engine(url).begin() as conn:
        conn.execute(text("UPDATE dispatch_ledger SET heartbeat_at = now() - make_interval(mins => :m) "
                          "WHERE run_id = :r"), {"m": minutes, "r": run_id})


def test_a_heartbeat_keeps_a_row_alive_and_a_silent_one_is_reclaimed(db_url, db_engine):
    ids = seed_cards(db_url, 2)
    with db_engine.begin() as conn:
        ledger.open_batch(conn, "run-a", "card-event", "passive", ids)
    _age(db_url, "run-a", 10)
    with db_engine.begin() as conn:
        assert ledger.heartbeat(conn, "run-a")
    with db_engine.begin() as conn:
        assert ledger.reap(conn, max_age_seconds=300) == []
    _age(db_url, "run-a", 10)
    with db_engine.begin() as conn:
        (row,) = ledger.reap(conn, max_age_seconds=300)
    assert (row.run_id, row.status) == ("run-a", "failed") and "no heartbeat since" in row.failure_reason
    with db_engine.begin() as conn:
        assert not ledger.heartbeat(conn, "run-a")  # a reclaimed row stays closed
    with db_engine.begin() as conn:
        assert ledger.reap(conn, max_age_seconds=300) == []
    with db_engine.connect() as conn:
        assert [c.id for c in cards_needing_work(conn, 10)] == ids


def test_a_row_whose_process_is_gone_is_reclaimed_at_once(db_url, db_engine):
    ids = seed_cards(db_url, 3)
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        with db_engine.begin() as conn:
            ledger.open_batch(conn, "run-child", "bulk", "bulk", ids[:2], owner=process_owner(child.pid))
            ledger.open_batch(conn, "run-elsewhere", "bulk", "bulk", ids[2:], owner="another-host/1/1.00")
        assert not owner_is_gone(process_owner(child.pid))
        with db_engine.begin() as conn:
            assert ledger.reap(conn, max_age_seconds=300) == []
        child.kill()
        child.wait(timeout=10)
        assert owner_is_gone(f"{host_id()}/{child.pid}/0.00")
        with db_engine.begin() as conn:
            (row,) = ledger.reap(conn, max_age_seconds=300)
        assert row.run_id == "run-child" and "is gone" in row.failure_reason
        with db_engine.connect() as conn:
            assert ledger.get(conn, "run-elsewhere").status == "running"  # another host's process: heartbeat decides
            assert [c.id for c in cards_needing_work(conn, 10)] == ids[:2]
    finally:
        child.kill()


def test_a_row_whose_dagster_run_ended_is_reclaimed_after_a_grace(db_url, db_engine, instance, monkeypatch):
    ids = seed_cards(db_url, 2)
    run = instance.create_run_for_job(dg.GraphDefinition("g").to_job())
    with db_engine.begin() as conn:
        ledger.open_batch(conn, run.run_id, "card-event", "passive", ids)
    instance.report_run_failed(run)
    assert reaper.reclaim_dead_batches(instance, db_engine, 300) == []  # the run-failure sensor gets its chance first
    monkeypatch.setattr(reaper, "ENDED_GRACE_SECONDS", -1.0)
    (row,) = reaper.reclaim_dead_batches(instance, db_engine, 300)
    assert row.run_id == run.run_id and "Dagster run ended" in row.failure_reason
    add_runs(instance, dg.DagsterRunStatus.STARTED, 1, card_ids=tuple(ids))  # still busy elsewhere: not offered
    busy = run_queue.busy_card_ids(instance, db_engine)
    with db_engine.connect() as conn:
        assert cards_needing_work(conn, 10, busy) == []


def test_a_run_left_started_by_a_killed_process_does_not_hold_its_cards(db_url, db_engine, instance):
    ids = seed_cards(db_url, 2)
    add_runs(instance, dg.DagsterRunStatus.STARTED, 1, card_ids=tuple(ids))
    (run,) = instance.get_runs(dg.RunsFilter(statuses=[dg.DagsterRunStatus.STARTED]))
    assert run_queue.busy_card_ids(instance, db_engine) == set(ids)  # before its ledger row opens: busy
    with db_engine.begin() as conn:
        ledger.open_batch(conn, run.run_id, "bulk", "bulk", ids)
    assert run_queue.busy_card_ids(instance, db_engine) == set(ids)
    with db_engine.begin() as conn:
        ledger.mark_failed(conn, run.run_id, "failed", "reclaimed")  # Dagster still says STARTED
    assert run_queue.busy_card_ids(instance, db_engine) == set()
    busy = run_queue.busy_card_ids(instance, db_engine)
    with db_engine.connect() as conn:
        assert [c.id for c in cards_needing_work(conn, 10, busy)] == ids
