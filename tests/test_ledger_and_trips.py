"""Ledger and trip rules on a real Postgres: truthful statuses, exactly-once trips, strict acknowledgement."""

from __future__ import annotations

import re

import pytest

from stage_e_dagster.db.runs import ledger, trips


def test_ledger_opens_once_merges_counters_and_closes_completed(db_url):
    ledger.open_batch(db_url, "run-1", "card-event", "passive", [1, 2, 3])
    ledger.open_batch(db_url, "run-1", "card-event", "passive", [1, 2, 3])  # a retried step
    ledger.merge_counters(db_url, "run-1", {"stage_c": {"extracted": 3}})
    assert ledger.close(db_url, "run-1", "completed", {"stage_e": {"resolved": 0}})
    row = ledger.get(db_url, "run-1")
    assert row.status == "completed" and row.card_ids == [1, 2, 3] and row.finished_at is not None
    assert row.counters == {"stage_c": {"extracted": 3}, "stage_e": {"resolved": 0}}


def test_a_closed_row_is_never_reopened_or_overwritten(db_url):
    ledger.open_batch(db_url, "run-2", "manual", "bulk", [5])
    assert ledger.close(db_url, "run-2", "completed")
    assert not ledger.close(db_url, "run-2", "throttled")
    ledger.mark_failed(db_url, "run-2", "failed", "late failure event")
    assert ledger.get(db_url, "run-2").status == "completed"


def test_a_run_that_died_before_opening_its_row_is_still_recorded(db_url):
    ledger.mark_failed(db_url, "run-3", "failed", "run worker crashed", "card-event", "passive", [7, 8])
    row = ledger.get(db_url, "run-3")
    assert (row.status, row.failure_reason, row.card_ids) == ("failed", "run worker crashed", [7, 8])
    ledger.mark_failed(db_url, "run-3", "halted", "envelope host_load")
    assert ledger.get(db_url, "run-3").status == "halted"


def test_only_completed_or_throttled_close_a_row(db_url):
    with pytest.raises(ValueError):
        ledger.close(db_url, "x", "failed")
    with pytest.raises(ValueError):
        ledger.mark_failed(db_url, "x", "completed", "no")


def test_trip_is_recorded_exactly_once_per_run(db_url):
    first = trips.record_trip(db_url, "run-9", "host_load", 11.85, 7.0, {"cores": 8})
    again = trips.record_trip(db_url, "run-9", "host_load", 12.0, 7.0)
    assert re.fullmatch(r"envtrip-\d{8}T\d{6}-[0-9a-f]{8}", first)
    assert again is None
    assert [t.id for t in trips.open_trips(db_url)] == [first]


def test_acknowledgement_rules(db_url):
    a = trips.record_trip(db_url, "run-a", "rss", 1500.0, 1024.0)
    b = trips.record_trip(db_url, "run-b", "host_load", 9.0, 1.0)
    with pytest.raises(trips.TripError, match="note"):
        trips.acknowledge(db_url, a, "   ")
    with pytest.raises(trips.TripError, match="no envelope trip"):
        trips.acknowledge(db_url, "envtrip-nope", "fixed")
    done = trips.acknowledge(db_url, a, "  killed the runaway job  ")
    assert done.acknowledged_note == "killed the runaway job" and done.acknowledged_at is not None
    with pytest.raises(trips.TripError, match="already acknowledged"):
        trips.acknowledge(db_url, a, "again")
    assert [t.id for t in trips.open_trips(db_url)] == [b]
