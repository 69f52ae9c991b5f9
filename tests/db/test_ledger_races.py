"""The dispatch ledger's and the envelope trips' locks, raced: two connections behind a barrier meet at the lock under
test (a gate holds the row they both need, `testkit.race`), and the oracle is the rows left behind, checked against
the rule the lock keeps.

- a ledger row leaves `running` once: a late `close` and the reaper, or two failure records, never both defer its
  cards (each deferral counts an attempt, so the rule is "one attempt per ended batch");
- a closed row is never reopened or overwritten by a late `open_batch` (a retried step);
- a run's trip is recorded once, and the second recorder is told so instead of failing;
- a trip is acknowledged once: of two operators, one wins and the other is told it was already done.
"""

from __future__ import annotations

import pytest

from stage_e_dagster.db.core.engine import get_engine
from stage_e_dagster.db.runs import ledger, trips
from testkit.race import queued_behind_gate, raced_behind_gate
from testkit.seed import seed_cards
from testkit.sql import rows

ROW_LOCK = "SELECT 1 FROM dispatch_ledger WHERE run_id = %s FOR UPDATE"


def _open(url: str, run_id: str, cards: list[int], owner: str = "first") -> None:
    with get_engine(url).begin() as conn:
        ledger.open_batch(conn, run_id, "card-event", "passive", cards, owner=owner)


def _attempts(url: str, cards: list[int]) -> list[int]:
    return [n for (n,) in rows(url, "SELECT attempts FROM card_work WHERE card_id = ANY(%s) ORDER BY card_id",
                               (cards,))]


def _in_transaction(url: str, work):
    def racer():
        with get_engine(url).begin() as conn:
            return work(conn)
    return racer


@pytest.mark.parametrize("first", ["close", "reap"])
def test_a_late_close_and_the_reaper_end_a_batch_once(db_url, first):
    """Whichever of the run's own close and the reaper meets the row second finds it no longer `running`."""
    cards = seed_cards(db_url, 3)
    _open(db_url, "run-1", cards)
    enders = {"close": _in_transaction(db_url, lambda conn: ledger.close(conn, "run-1", "completed")),
              "reap": _in_transaction(db_url, lambda conn: bool(ledger.reap(conn, 3600, ended_runs={"run-1"})))}
    order = [first, *(name for name in enders if name != first)]
    won = dict(zip(order, [o.result() for o in queued_behind_gate(db_url, ROW_LOCK, ("run-1",),
                                                                 *(enders[name] for name in order))], strict=True))
    assert won == {first: True, order[1]: False}, "the first one ends the row, the second finds it ended"
    assert rows(db_url, "SELECT status FROM dispatch_ledger WHERE run_id = 'run-1'") == [
        ("completed" if first == "close" else "failed",)]
    assert _attempts(db_url, cards) == [1, 1, 1], "the unfinished cards are deferred once, by the one that won"


def test_two_failure_records_of_one_run_defer_its_cards_once(db_url):
    """The run-failure sensor and the in-process record both see one failed run: `mark_failed` reads the row's
    status under its row lock, so only the first one to take the row from `running` defers the cards."""
    cards = seed_cards(db_url, 3)
    _open(db_url, "run-2", cards)
    first, second = raced_behind_gate(
        db_url, ROW_LOCK, ("run-2",),
        _in_transaction(db_url, lambda conn: ledger.mark_failed(conn, "run-2", "failed", "sensor")),
        _in_transaction(db_url, lambda conn: ledger.mark_failed(conn, "run-2", "failed", "in process")))
    first.result(), second.result()
    assert rows(db_url, "SELECT status FROM dispatch_ledger WHERE run_id = 'run-2'") == [("failed",)]
    assert _attempts(db_url, cards) == [1, 1, 1]


@pytest.mark.parametrize("late", ["open_batch", "mark_failed"])
def test_a_closed_row_is_never_reopened_or_overwritten_by_a_late_writer(db_url, late):
    """The close queues first at the gate and the late writer (a retried step's `open_batch`, a failure event
    processed again) second, so it meets the row already closed."""
    cards = seed_cards(db_url, 2)
    _open(db_url, "run-3", cards, owner="first")
    writers = {
        "open_batch": lambda conn: ledger.open_batch(conn, "run-3", "card-event", "passive", cards, owner="late"),
        "mark_failed": lambda conn: ledger.mark_failed(conn, "run-3", "failed", "late failure event"),
    }
    closed, overwritten = queued_behind_gate(
        db_url, ROW_LOCK, ("run-3",), _in_transaction(db_url, lambda conn: ledger.close(conn, "run-3", "completed")),
        _in_transaction(db_url, writers[late]))
    assert closed.result() is True
    overwritten.result()
    assert rows(db_url, "SELECT status, owner, failure_reason FROM dispatch_ledger WHERE run_id = 'run-3'") == [
        ("completed", "first", None)]
    assert rows(db_url, "SELECT count(*) FROM dispatch_ledger WHERE run_id = 'run-3' AND heartbeat_at > finished_at"
                ) == [(0,)], "a closed row's heartbeat is not touched after it closed"
    assert _attempts(db_url, cards) == [1, 1]


def test_a_runs_trip_is_recorded_once_when_two_record_it_at_once(db_url):
    """Both recorders insert; the second waits on the first's uncommitted row and is told it is already there."""
    recorded = raced_behind_gate(
        db_url, "LOCK TABLE envelope_trip IN SHARE ROW EXCLUSIVE MODE", None,
        *[_in_transaction(db_url, lambda conn: trips.record_trip(conn, "run-4", "rss", 900.0, 800.0))] * 2)
    ids = [outcome.result() for outcome in recorded]
    assert ids.count(None) == 1, ids
    assert rows(db_url, "SELECT id FROM envelope_trip WHERE run_id = 'run-4'") == [(next(filter(None, ids)),)]


def test_two_operators_acknowledging_one_trip_at_once_acknowledge_it_once(db_url):
    with get_engine(db_url).begin() as conn:
        trip_id = trips.record_trip(conn, "run-5", "host_load", 9.0, 4.0)
    notes = ("restarted the workers", "moved the batch job")
    outcomes = raced_behind_gate(
        db_url, "SELECT 1 FROM envelope_trip WHERE id = %s FOR UPDATE", (trip_id,),
        *[_in_transaction(db_url, lambda conn, note=note: trips.acknowledge(conn, trip_id, note)) for note in notes])
    done = [o for o in outcomes if o.error is None]
    refused = [o for o in outcomes if o.error is not None]
    assert len(done) == 1 and len(refused) == 1, [o.error for o in outcomes]
    assert isinstance(refused[0].error, trips.TripError) and "already acknowledged" in str(refused[0].error)
    assert rows(db_url, "SELECT acknowledged_note FROM envelope_trip WHERE id = %s", (trip_id,)) == [
        (done[0].value.acknowledged_note,)]
