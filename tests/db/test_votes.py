"""Vote and scan-log writing: the value-aware split, atomic replacement, absorbed races, the scan-log rules."""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import select

from stage_e_dagster.db.core.engine import get_engine, session_scope
from stage_e_dagster.db.core.models import CardPrintingTag, CardScanLog
from stage_e_dagster.db.judgement.votes import write_log_entries, write_vote_groups
from stage_e_dagster.domain.calculators import FALLBACK_ID, JOIN_KEY_ID, SLOW_PATH_ID
from stage_e_dagster.domain.stage_d import LogEntry, ProposedVote, VoteGroup
from stage_e_dagster.stages.stage_d import run_stage_d
from testkit.live import wait_for
from testkit.seed import add_cards, add_evidence, mini_catalog, number_only_evidence, set_evidence
from testkit.sql import scalar

VOTER = "stage-d-join-key-v1"


@pytest.fixture
def opt(db_url):
    printings = mini_catalog(db_url)
    (card_id,) = add_cards(db_url, [("Opt.png", "Opt", None)])
    return card_id, printings


def _write(url, groups, run_id="r"):
    with get_engine(url).begin() as conn:
        return write_vote_groups(conn, groups, run_id)


def _group(card_id, *printing_ids, voter=VOTER, no_match=False):
    votes = tuple(ProposedVote(p, False, "ocr", 0.85) for p in printing_ids)
    if no_match:
        votes += (ProposedVote(None, True, "ocr", 0.6),)
    return VoteGroup(card_id, voter, votes)


def _stored(url, card_id):
    with session_scope(get_engine(url)) as s:
        rows = s.scalars(select(CardPrintingTag).where(CardPrintingTag.card_id == card_id)).all()
        return sorted((r.anonymous_id, r.printing_id, r.is_no_match) for r in rows)


def test_value_aware_split_inserts_skips_replaces_and_withdraws(db_url, opt):
    card, p = opt
    first = _write(db_url, [_group(card, p["aaa-12"])])
    assert (first.inserted, first.votes_cast, first.already_voted) == (1, 1, 0)
    same = _write(db_url, [_group(card, p["aaa-12"])])
    assert (same.already_voted, same.votes_cast, same.replaced) == (1, 0, 0)
    changed = _write(db_url, [_group(card, p["ccc-12"])])
    assert (changed.replaced, changed.votes_cast, changed.votes_removed) == (1, 1, 1)
    assert _stored(db_url, card) == [(VOTER, p["ccc-12"], False)]
    to_no_match = _write(db_url, [_group(card, no_match=True)])
    assert to_no_match.replaced == 1 and _stored(db_url, card) == [(VOTER, None, True)]
    withdrawn = _write(db_url, [_group(card)])
    assert (withdrawn.withdrawn, withdrawn.votes_removed, withdrawn.already_voted) == (1, 1, 0)
    assert _stored(db_url, card) == []
    nothing = _write(db_url, [_group(card)])
    assert (nothing.withdrawn, nothing.inserted, nothing.already_voted) == (0, 0, 0)


def test_groups_for_missing_cards_are_counted_and_duplicates_collapse(db_url, opt):
    card, p = opt
    result = _write(db_url, [_group(10**9, p["aaa-12"]), _group(card, p["bbb-40"]), _group(card, p["aaa-12"])])
    assert (result.missing_cards, result.inserted, result.votes_cast) == (1, 1, 1)
    assert _stored(db_url, card) == [(VOTER, p["aaa-12"], False)]  # the last group for (card, voter) wins


def test_replacement_is_one_transaction_never_zero_or_two_votes_visible(db_url, db_engine, opt, pg_connect):
    card, p = opt
    _write(db_url, [_group(card, p["aaa-12"])])
    observer = pg_connect()

    def visible():
        with observer.cursor() as cur:
            cur.execute("SELECT printing_id FROM card_printing_tag WHERE card_id = %s AND anonymous_id = %s",
                        (card, VOTER))
            return [row[0] for row in cur.fetchall()]

    with db_engine.connect() as conn:
        transaction = conn.begin()
        result = write_vote_groups(conn, [_group(card, p["ccc-12"])], "r2")
        assert result.replaced == 1
        assert visible() == [p["aaa-12"]]  # delete and insert are not visible before commit
        transaction.commit()
    assert visible() == [p["ccc-12"]]

    seen: list[int] = []
    stop = threading.Event()

    def poll():
        while not stop.is_set():
            seen.append(len(visible()))

    poller = threading.Thread(target=poll)
    poller.start()
    try:
        for i in range(30):
            _write(db_url, [_group(card, p["aaa-12"] if i % 2 else p["ccc-12"])])
    finally:
        stop.set()
        poller.join()
    assert seen and set(seen) == {1}


def test_lost_insert_race_is_absorbed_not_raised(db_url, opt, pg_connect):
    card, p = opt
    rival = pg_connect(autocommit=False)
    with rival.cursor() as cur:  # another writer's identical vote, not yet committed (and taking no card lock)
        cur.execute("INSERT INTO card_printing_tag (card_id, printing_id, is_no_match, anonymous_id, source) "
                    "VALUES (%s, %s, false, %s, 'ocr')", (card, p["aaa-12"], VOTER))
    done: dict = {}
    writer = threading.Thread(target=lambda: done.update(result=_write(db_url, [_group(card, p["aaa-12"])])))
    writer.start()
    try:
        # The write waits on the rival's uncommitted row: the server says the rival blocks a session of ours.
        wait_for(lambda: scalar(db_url, "SELECT count(*) FROM pg_stat_activity WHERE %s = ANY(pg_blocking_pids(pid))",
                                (rival.get_backend_pid(),)), 60, "the write to wait for the rival's row", poll=0.02)
        assert writer.is_alive(), "the write returned while the rival's row was uncommitted"
    finally:
        rival.commit()
        writer.join(60)
    result = done["result"]  # raised in the writer instead: no result
    assert (result.inserted, result.already_voted, result.race_absorbed, result.votes_cast) == (0, 1, 1, 0)
    assert _stored(db_url, card) == [(VOTER, p["aaa-12"], False)]


def _log(url, card_id):
    with session_scope(get_engine(url)) as s:
        rows = s.scalars(select(CardScanLog).where(CardScanLog.card_id == card_id).order_by(CardScanLog.id)).all()
        return [(r.anonymous_id, r.skip_reason, r.evidence_key) for r in rows]


def _entries(url, *entries):
    with get_engine(url).begin() as conn:
        return write_log_entries(conn, list(entries), "r")


def test_scan_log_appends_only_changes_and_marks_review_once_per_evidence_version(db_url, opt):
    card, _ = opt
    no_text = LogEntry(card, JOIN_KEY_ID, "no-text", "collector=1", {"collector_raw": "~"})
    first = _entries(db_url, no_text, LogEntry(card, SLOW_PATH_ID, "to-review", "collector=1", {"why": ["x"]}))
    assert (first.appended, first.review_marked) == (1, 1)
    again = _entries(db_url, no_text, LogEntry(card, SLOW_PATH_ID, "to-review", "collector=1", {"why": ["y"]}))
    assert (again.appended, again.unchanged, again.review_marked, again.review_already) == (0, 1, 0, 1)
    _entries(db_url, LogEntry(card, JOIN_KEY_ID, "ambiguous", "collector=1"))
    _entries(db_url, no_text)  # back to an earlier reason: the latest row differs, so it is appended
    _entries(db_url, LogEntry(card, JOIN_KEY_ID, "no-text", "collector=2"),
             LogEntry(card, SLOW_PATH_ID, "to-review", "collector=2"))
    assert _log(db_url, card) == [
        (JOIN_KEY_ID, "no-text", "collector=1"), (SLOW_PATH_ID, "to-review", "collector=1"),
        (JOIN_KEY_ID, "ambiguous", "collector=1"), (JOIN_KEY_ID, "no-text", "collector=1"),
        (JOIN_KEY_ID, "no-text", "collector=2"), (SLOW_PATH_ID, "to-review", "collector=2"),
    ]


def test_confident_join_key_hit_withdraws_a_stale_fallback_vote(db_url, db_engine, opt):
    card, p = opt
    add_evidence(db_url, card, **number_only_evidence())
    first = run_stage_d(db_engine, [card], "run-1")
    assert _stored(db_url, card) == [(FALLBACK_ID, p["bbb-40"], False), (JOIN_KEY_ID, p["bbb-40"], False)]
    assert first["vote_groups_inserted"] == 2
    set_evidence(db_url, card, set_code="bbb", set_code_raw="BBB")  # now read with its set code: a confident hit
    second = run_stage_d(db_engine, [card], "run-2")
    assert _stored(db_url, card) == [(JOIN_KEY_ID, p["bbb-40"], False)]
    assert (second["vote_groups_withdrawn"], second["already_voted"], second["votes_removed"]) == (1, 1, 1)
    assert second["outcomes"][FALLBACK_ID] == {"not-run": 1}
