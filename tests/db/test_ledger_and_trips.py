"""Ledger and trip rules on a real Postgres: truthful statuses, exactly-once trips, strict acknowledgement."""

from __future__ import annotations

import re

import pytest

from stage_e_dagster.db.runs import ledger, trips


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
