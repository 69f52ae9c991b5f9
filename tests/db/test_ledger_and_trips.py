"""Ledger and trip rules on a real Postgres: truthful statuses, exactly-once trips, strict acknowledgement."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import text

from stage_e_dagster.db.core.engine import get_engine
from stage_e_dagster.db.runs import ledger, trips
from testkit.seed import seed_cards
from testkit.sql import rows


def test_ledger_opens_once_merges_counters_and_closes_completed(db_engine):
    with db_engine.begin() as conn:
        ledger.open_batch(conn, "run-1", "card-event", "passive", [1, 2, 3])
    with db_engine.begin() as conn:
        ledger.open_batch(conn, "run-1", "card-event", "passive", [1, 2, 3])  # a retried step
    with db_engine.begin() as conn:
        ledger.merge_counters(conn, "run-1", {"stage_c": {"extracted": 3}})
    with db_engine.begin() as conn:
        assert ledger.close(conn, "run-1", "completed", {"stage_e": {"resolved": 0}})
    with db_engine.connect() as conn:
        row = ledger.get(conn, "run-1")
    assert row.status == "completed" and row.card_ids == [1, 2, 3] and row.finished_at is not None
    assert row.counters == {"stage_c": {"extracted": 3}, "stage_e": {"resolved": 0}}


def test_a_closed_row_is_never_reopened_or_overwritten(db_engine):
    with db_engine.begin() as conn:
        ledger.open_batch(conn, "run-2", "manual", "bulk", [5])
    with db_engine.begin() as conn:
        assert ledger.close(conn, "run-2", "completed")
    with db_engine.begin() as conn:
        assert not ledger.close(conn, "run-2", "throttled")
    with db_engine.begin() as conn:
        ledger.mark_failed(conn, "run-2", "failed", "late failure event")
    with db_engine.connect() as conn:
        assert ledger.get(conn, "run-2").status == "completed"


def test_a_run_that_died_before_opening_its_row_is_still_recorded(db_engine):
    with db_engine.begin() as conn:
        ledger.mark_failed(conn, "run-3", "failed", "run worker crashed", "card-event", "passive", [7, 8])
    with db_engine.connect() as conn:
        row = ledger.get(conn, "run-3")
    assert (row.status, row.failure_reason, row.card_ids) == ("failed", "run worker crashed", [7, 8])
    with db_engine.begin() as conn:
        ledger.mark_failed(conn, "run-3", "halted", "envelope host_load")
    with db_engine.connect() as conn:
        assert ledger.get(conn, "run-3").status == "halted"


def test_only_completed_or_throttled_close_a_row(db_engine):
    with db_engine.begin() as conn:
        with pytest.raises(ValueError):
            ledger.close(conn, "x", "failed")
        with pytest.raises(ValueError):
            ledger.mark_failed(conn, "x", "completed", "no")


def test_trip_is_recorded_exactly_once_per_run(db_engine):
    with db_engine.begin() as conn:
        first = trips.record_trip(conn, "run-9", "host_load", 11.85, 7.0, {"cores": 8})
    with db_engine.begin() as conn:
        again = trips.record_trip(conn, "run-9", "host_load", 12.0, 7.0)
    assert re.fullmatch(r"envtrip-\d{8}T\d{6}-[0-9a-f]{8}", first)
    assert again is None
    with db_engine.connect() as conn:
        assert [t.id for t in trips.open_trips(conn)] == [first]


def test_acknowledgement_rules(db_engine):
    with db_engine.begin() as conn:
        a = trips.record_trip(conn, "run-a", "rss", 1500.0, 1024.0)
    with db_engine.begin() as conn:
        b = trips.record_trip(conn, "run-b", "host_load", 9.0, 1.0)
    with pytest.raises(trips.TripError, match="note"), db_engine.begin() as conn:
        trips.acknowledge(conn, a, "   ")
    with pytest.raises(trips.TripError, match="no envelope trip"), db_engine.begin() as conn:
        trips.acknowledge(conn, "envtrip-nope", "fixed")
    with db_engine.begin() as conn:
        done = trips.acknowledge(conn, a, "  killed the runaway job  ")
    assert done.acknowledged_note == "killed the runaway job" and done.acknowledged_at is not None
    with pytest.raises(trips.TripError, match="already acknowledged"), db_engine.begin() as conn:
        trips.acknowledge(conn, a, "again")
    with db_engine.connect() as conn:
        assert [t.id for t in trips.open_trips(conn)] == [b]


def test_each_ledger_call_on_one_run_leaves_another_running_batch_alone(db_url, db_engine):
    """Two batches running at once on cards still owed work (and an older one that completed): a heartbeat, merged
    counters, a close and a failure record of one run change that run's row and defer that run's cards only."""
    cards = seed_cards(db_url, 6)
    done, mine, failing, theirs = cards[:1], cards[1:3], cards[3:4], cards[4:]
    with db_engine.begin() as conn:
        ledger.open_batch(conn, "run-0", "card-event", "passive", done)
        assert ledger.close(conn, "run-0", "completed")
    for run_id, batch in (("run-1", mine), ("run-2", failing), ("run-3", theirs)):
        with db_engine.begin() as conn:
            ledger.open_batch(conn, run_id, "card-event", "passive", batch)
    _sql(db_url, "UPDATE dispatch_ledger SET heartbeat_at = now() - interval '1 hour'")
    before = _row(db_url, "run-3")
    with db_engine.begin() as conn:
        assert ledger.heartbeat(conn, "run-1")
        ledger.merge_counters(conn, "run-1", {"stage_c": {"extracted": 2}})
    assert _row(db_url, "run-3") == before and _row(db_url, "run-2")[2] == before[2]
    with db_engine.begin() as conn:
        assert ledger.close(conn, "run-1", "completed")
        ledger.mark_failed(conn, "run-2", "failed", "run worker crashed")
    assert _row(db_url, "run-3") == before
    assert rows(db_url, "SELECT run_id, status FROM dispatch_ledger ORDER BY run_id") == [
        ("run-0", "completed"), ("run-1", "completed"), ("run-2", "failed"), ("run-3", "running")]
    assert _attempts(db_url, cards) == [1, 1, 1, 1, 0, 0], "run-0's card once, by its own close"
    with db_engine.connect() as conn:
        assert ledger.get(conn, "run-3").card_ids == theirs
        assert ledger.closed_run_ids(conn, ["run-2", "run-3"]) == {"run-2"}


def _sql(url: str, statement: str) -> None:
    with get_engine(url).begin() as conn:
        conn.execute(text(statement))


def _row(url: str, run_id: str) -> tuple:
    (row,) = rows(url, "SELECT status, counters, heartbeat_at, failure_reason, finished_at FROM dispatch_ledger "
                       "WHERE run_id = %s", (run_id,))
    return row


def _attempts(url: str, cards: list[int]) -> list[int]:
    return [n for (n,) in rows(url, "SELECT attempts FROM card_work WHERE card_id = ANY(%s) ORDER BY card_id",
                               (cards,))]
