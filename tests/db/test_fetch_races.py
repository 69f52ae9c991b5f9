"""The fetch pace's and the fetch state's locks, raced: two connections behind a barrier meet at the row under test
(a gate holds it, `testkit.race`), and the oracle is the rows left behind, checked against the rule each lock keeps.

The fetch pace (`fetch_pace`, one row): two grants at once are one interval apart; two throttled responses of one
generation halve the pace once; two clean responses at once are both counted, so the one that completes the run
restores the pace.

The fetch state: an outcome for a card's old version (its bytes, a named skip, a broken attempt) that meets a sync
of its new version is dropped; a skip is logged once; two broken fetches count two attempts and end the card once;
two deferrals keep the later wait; a host's first answers, or first 403s, at once leave one `fetch_host` row; of two
403s at once that reach the lockout, one records it and the other is deferred, never skipped; an answer that meets a
403 at the host's row ends the streak.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import text

from stage_e_dagster.db.core.engine import get_engine
from stage_e_dagster.db.intake import fetch_state, pace
from stage_e_dagster.db.intake.ingest import IngestSummary
from stage_e_dagster.db.intake.remote_sync import merge_listed
from stage_e_dagster.db.intake.sources import add_remote_source
from stage_e_dagster.domain.remote import Listed, parse_location
from testkit.race import queued_behind_gate, raced_behind_gate
from testkit.sql import rows

PACE_ROW = "SELECT 1 FROM fetch_pace WHERE id = 1 FOR UPDATE"
CARD_ROW = "SELECT 1 FROM card WHERE id = %s FOR UPDATE"
HOST_ROW = "SELECT 1 FROM fetch_host WHERE host = %s FOR UPDATE"
HOST_INSERTS = "LOCK TABLE fetch_host IN SHARE ROW EXCLUSIVE MODE"
HOST = "https://images.example"
INTERVAL = 10.0
"""Seconds between two turns: far longer than the race takes, so the turns' spacing is the pace's, not the clock's."""


def _in_transaction(url: str, work):
    def racer():
        with get_engine(url).begin() as conn:
            return work(conn)
    return racer


def _started(work):
    """`work` that first notes when its transaction started (`now()`), so the oracle can tell which writer wrote."""
    def run(conn):
        started = conn.execute(text("SELECT now()")).scalar_one()
        return started, work(conn)
    return run


def _source(url: str, key: str = "bucket", names: tuple[str, ...] = ("a.png",)) -> tuple[int, list[int]]:
    """A registered S3 source with `names` listed (token `v1-<name>`): its id and its cards' ids, by name."""
    with get_engine(url).begin() as conn:
        source, _ = add_remote_source(conn, key, parse_location(f"s3://scans/{key}"))
        merge_listed(conn, source.id, [Listed(name, f"v1-{name}", 10) for name in names], IngestSummary())
        ids = conn.execute(text("SELECT id FROM card WHERE source_id = :s ORDER BY identifier"),
                           {"s": source.id}).scalars().all()
    return source.id, list(ids)


def _pace(url: str) -> tuple[float, int, int, int]:
    (row,) = rows(url, "SELECT factor, generation, clean_streak, halvings FROM fetch_pace WHERE id = 1")
    return row


# The fetch pace.

def test_two_grants_at_once_are_one_interval_apart(db_url):
    """Each grant moves the theoretical arrival time on by one interval in the statement that reads it: the second
    grant reads the first's."""
    grants = raced_behind_gate(db_url, PACE_ROW, None,
                               *[_in_transaction(db_url, lambda conn: pace.grant(conn, INTERVAL))] * 2)
    first, second = sorted(o.result().at for o in grants)
    assert second - first == pytest.approx(INTERVAL, abs=0.5), "the second turn is one interval after the first"
    (tat,) = rows(db_url, "SELECT EXTRACT(EPOCH FROM tat) FROM fetch_pace WHERE id = 1")[0]
    assert float(tat) - first == pytest.approx(2 * INTERVAL, abs=0.5), "the row moved on by both turns"


def test_two_throttled_responses_of_one_generation_halve_the_pace_once(db_url):
    """Both responses answer requests granted under generation 0: the first halves the pace and moves the
    generation on, so the second's compare-and-swap on the generation finds nothing to halve."""
    halved = raced_behind_gate(db_url, PACE_ROW, None,
                               *[_in_transaction(db_url, lambda conn: pace.throttled(conn, 0, INTERVAL, 0.05))] * 2)
    assert sorted((o.result() for o in halved), key=lambda f: f is None) == [0.5, None]
    factor, generation, streak, halvings = _pace(db_url)
    assert (factor, generation, streak, halvings) == (0.5, 1, 0, 1)


def test_two_clean_responses_at_once_both_count_and_the_run_restores_the_pace_once(db_url):
    """Two clean responses short of a run of four: both are counted (the streak is read and written in one
    statement under the row's lock), so the second completes the run and doubles the pace back."""
    rows(db_url, "UPDATE fetch_pace SET factor = 0.5, generation = 3, clean_streak = 2 WHERE id = 1 RETURNING id")
    raced_behind_gate(db_url, PACE_ROW, None, *[_in_transaction(db_url, lambda conn: pace.clean(conn, 4))] * 2)
    assert _pace(db_url)[:3] == (1.0, 4, 0), "doubled once, by the response that completed the run"


# The fetch state: one card's outcomes.

def _new_version(url: str, source_id: int, name: str = "a.png"):
    """A sync that saw a new version of `name` (a new change token: its bytes unknown again)."""
    return _in_transaction(url, lambda conn: merge_listed(conn, source_id, [Listed(name, f"v2-{name}", 20)],
                                                         IngestSummary()))


OUTCOMES = {
    "fetched": lambda conn, card: fetch_state.record_fetched(conn, card, "v1-a.png", "ab" * 32, 10, None),
    "skipped": lambda conn, card: fetch_state.record_skip(conn, card, "v1-a.png", "k", "fetch-gone", {}, "run-1"),
    "broken": lambda conn, card: fetch_state.record_broken(conn, card, "v1-a.png", "k", "fetch-corrupt", {}, 1,
                                                           "run-1")[1],
}


@pytest.mark.parametrize("outcome", sorted(OUTCOMES))
def test_an_outcome_for_the_old_version_that_meets_a_sync_of_the_new_one_is_dropped(db_url, outcome):
    """The sync reaches the card's row first; the fetch's write, guarded by the change token it fetched, then finds
    the card at another version and changes nothing: the new version is owed a fetch of its own."""
    source, (card,) = _source(db_url)
    sync, late = queued_behind_gate(db_url, CARD_ROW, (card,), _new_version(db_url, source),
                                    _in_transaction(db_url, lambda conn: OUTCOMES[outcome](conn, card)))
    sync.result()
    assert late.result() is False, "the outcome says the card moved on"
    assert rows(db_url, "SELECT remote_token, content_sha256, content_verified, fetch_failed, fetch_attempts "
                        "FROM card WHERE id = %s", (card,)) == [("v2-a.png", None, False, None, 0)]
    assert rows(db_url, "SELECT count(*) FROM card_scan_log WHERE card_id = %s", (card,)) == [(0,)]


def test_two_skips_of_one_card_at_once_log_it_once(db_url):
    """The skip takes the card's row (its update) before it looks for the log row it would add, so the second
    writer waits for the first and finds it."""
    _source_id, (card,) = _source(db_url)
    skips = raced_behind_gate(db_url, CARD_ROW, (card,),
                              *[_in_transaction(db_url, lambda conn: OUTCOMES["skipped"](conn, card))] * 2)
    assert [o.result() for o in skips] == [True, True]
    assert rows(db_url, "SELECT skip_reason, evidence_key FROM card_scan_log WHERE card_id = %s", (card,)) == [
        ("fetch-gone", "fetch:k")]


def test_two_broken_fetches_at_once_count_two_attempts_and_end_the_card_once(db_url):
    """With two attempts allowed, two broken fetches at once are the card's last: each counts in the statement that
    reads the count, so exactly one of them sees the second attempt and makes the skip final."""
    _source_id, (card,) = _source(db_url)
    attempt = _in_transaction(db_url, lambda conn: fetch_state.record_broken(conn, card, "v1-a.png", "k",
                                                                             "fetch-corrupt", {}, 2, "run-1"))
    broken = raced_behind_gate(db_url, CARD_ROW, (card,), attempt, attempt)
    assert sorted(o.result() for o in broken) == [(1, False), (2, True)]
    assert rows(db_url, "SELECT fetch_attempts, fetch_failed FROM card WHERE id = %s", (card,)) == [
        (2, "fetch-corrupt")]
    assert rows(db_url, "SELECT count(*) FROM card_scan_log WHERE card_id = %s", (card,)) == [(1,)]


def test_two_deferrals_at_once_keep_the_later_wait(db_url):
    """A long deferral (a throttled batch) reaches the card's work row first and a short one second: the short one
    never shortens the wait."""
    _source_id, (card,) = _source(db_url)
    long, short = queued_behind_gate(
        db_url, "SELECT 1 FROM card_work WHERE card_id = %s FOR UPDATE", (card,),
        _in_transaction(db_url, _started(lambda conn: fetch_state.defer(conn, [card], 600))),
        _in_transaction(db_url, lambda conn: fetch_state.defer(conn, [card], 5)))
    started, _ = long.result()
    short.result()
    (retry_at,) = rows(db_url, "SELECT retry_at FROM card_work WHERE card_id = %s", (card,))[0]
    assert retry_at == started + timedelta(seconds=600)


# The fetch state: a host's health.

def test_a_sources_answers_at_once_write_its_answer_time_once(db_url):
    """Two answers from one source: the first writes `fetch_ok_at`, the second (compare-and-swap on how old it is)
    finds it fresh and leaves it, so the source's row is not rewritten once per fetch."""
    source, _cards = _source(db_url)
    first, second = queued_behind_gate(
        db_url, "SELECT 1 FROM source WHERE id = %s FOR UPDATE", (source,),
        *[_in_transaction(db_url, _started(lambda conn: fetch_state.source_answered(conn, source)))] * 2)
    assert rows(db_url, "SELECT fetch_ok_at FROM source WHERE id = %s", (source,)) == [(first.result()[0],)]
    assert second.result()[0] > first.result()[0]


def test_a_hosts_first_answers_at_once_leave_one_row_written_once(db_url):
    """Two sources answered from one host they share, the host's first answers: both insert its row at once. One
    inserts, the other meets it (`ON CONFLICT`) and leaves it (it is fresh and holds no streak): the row is written
    by one transaction, with that one's time."""
    sources = [_source(db_url, key)[0] for key in ("one", "two")]

    def answer(source: int):
        def work(conn):
            fetch_state.source_answered(conn, source, HOST)
            return conn.execute(text("SELECT xmin = pg_current_xact_id()::text::xid FROM fetch_host WHERE host = :h"),
                                {"h": HOST}).scalar_one()
        return _in_transaction(db_url, _started(work))

    answers = [o.result() for o in raced_behind_gate(db_url, HOST_INSERTS, None, *map(answer, sources))]
    assert sorted(wrote for _, wrote in answers) == [False, True], "one of the two wrote the host's row"
    (writer,) = [started for started, wrote in answers if wrote]
    assert rows(db_url, "SELECT fetch_ok_at, forbidden_streak FROM fetch_host") == [(writer, 0)]


def _forbidden(url: str, source: int, card: int, run_id: str, name: str = "a.png"):
    return _in_transaction(url, lambda conn: fetch_state.record_forbidden(
        conn, source, card, f"v1-{name}", name, 3, run_id, {}, HOST))


def test_a_hosts_first_403s_at_once_leave_one_row_counting_both(db_url):
    """Two 403s from a host never seen: both create its row at once (`ON CONFLICT DO NOTHING`), then count under
    its lock. It never answered, so each card gets a named skip and no lockout is recorded."""
    source, cards = _source(db_url, names=("a.png", "b.png"))
    judged = raced_behind_gate(db_url, HOST_INSERTS, None, _forbidden(db_url, source, cards[0], "run-a", "a.png"),
                               _forbidden(db_url, source, cards[1], "run-b", "b.png"))
    assert [o.result() for o in judged] == [None, None]
    (streak, forbidden), = rows(db_url, "SELECT forbidden_streak, forbidden_cards FROM fetch_host")
    assert (streak, sorted(forbidden)) == (2, cards)
    assert rows(db_url, "SELECT fetch_failed FROM card ORDER BY id") == [("fetch-forbidden",)] * 2
    assert rows(db_url, "SELECT count(*) FROM envelope_trip") == [(0,)]


def test_of_two_403s_at_once_that_reach_the_lockout_one_records_it_and_the_other_is_deferred(db_url):
    """A host that answered before has two 403s in a row; two more arrive at once. The host's row is locked before
    the open trip is looked for, so the one that waits behind the lockout sees its trip (deferred, `LOCKED`), never
    a fresh streak (a named skip that would end its card's fetching for good)."""
    source, cards = _source(db_url, names=("a.png", "b.png", "c.png", "d.png"))
    rows(db_url, "INSERT INTO fetch_host (host, fetch_ok_at, forbidden_streak, forbidden_cards) "
                 "VALUES (%s, now(), 2, %s) RETURNING host", (HOST, cards[:2]))
    rows(db_url, "UPDATE card SET fetch_failed = 'fetch-forbidden' WHERE id = ANY(%s) RETURNING id", (cards[:2],))
    judged = raced_behind_gate(db_url, HOST_ROW, (HOST,),
                               _forbidden(db_url, source, cards[2], "run-c", "c.png"),
                               _forbidden(db_url, source, cards[3], "run-d", "d.png"))
    answers = [o.result() for o in judged]
    assert sorted(type(a).__name__ for a in answers) == ["Lockout", "str"] and fetch_state.LOCKED in answers
    assert rows(db_url, "SELECT count(*) FROM envelope_trip WHERE bar = %s AND acknowledged_at IS NULL",
                (fetch_state.LOCKOUT_BAR,)) == [(1,)]
    assert rows(db_url, "SELECT count(*) FROM card WHERE fetch_failed IS NOT NULL") == [(0,)], \
        "the streak's cards are given back and the deferred one is never skipped"
    assert rows(db_url, "SELECT forbidden_streak FROM fetch_host") == [(0,)]


def test_an_answer_that_meets_a_403_at_the_hosts_row_ends_the_streak(db_url):
    """A host that answered a moment ago gives a 403 and, at once, an answer: the answer waits for the 403's row
    lock, then resets the streak it finds (it writes although its answer time is fresh: a streak is open)."""
    source, (card,) = _source(db_url)
    rows(db_url, "INSERT INTO fetch_host (host, fetch_ok_at) VALUES (%s, now()) RETURNING host", (HOST,))
    forbidden, answered = queued_behind_gate(
        db_url, HOST_ROW, (HOST,), _forbidden(db_url, source, card, "run-1"),
        _in_transaction(db_url, lambda conn: fetch_state.source_answered(conn, source, HOST)))
    assert forbidden.result() is None and answered.result() is None
    assert rows(db_url, "SELECT forbidden_streak, forbidden_cards FROM fetch_host") == [(0, [])]
