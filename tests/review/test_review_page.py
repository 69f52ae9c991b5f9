"""The review page's queries against a real Postgres: the queue, the card view, claims and the vote check."""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import text

from stage_e_dagster.db.core.engine import get_engine
from stage_e_dagster.db.judgement.votes import cast_human_vote
from stage_e_dagster.db.review.claims import claim, claim_next, holder, release
from stage_e_dagster.db.review.page import (
    NotACandidate,
    StaleEntry,
    load_card_view,
    page_vote_check,
    queue_counts,
    queue_entries,
)
from stage_e_dagster.domain.work import STAGE_C_ID
from stage_e_dagster.stages.stage_d import run_stage_d
from testkit.review import card_state, human_votes
from testkit.seed import add_evidence


def _sql(url, statement, **params):
    with get_engine(url).begin() as conn:
        return conn.execute(text(statement), params)


def _queue(url, **options):
    with get_engine(url).connect() as conn:
        return queue_entries(conn, **options)


def _view(url, card_id):
    with get_engine(url).connect() as conn:
        return load_card_view(conn, card_id)


def _vote(url, card_id, user, scryfall_id=None, *, version=None, admin=False, no_match=False):
    source = "admin" if admin else "user"
    check = page_vote_check(card_id, user, version or _view(url, card_id).version, source)
    return cast_human_vote(get_engine(url), card_id, user, scryfall_id=scryfall_id, no_match=no_match, admin=admin,
                           check=check)


def test_the_queue_holds_every_card_awaiting_a_person_and_each_reviewer_sees_what_they_have_not_voted_on(
        review_db, corpus):
    ids = [scan.card_id for scan in corpus]
    entries = _queue(review_db)
    assert [e.card_id for e in entries] == ids
    assert [e.routed for e in entries] == [scan.scenario == "no-evidence" for scan in corpus]
    with get_engine(review_db).connect() as conn:
        counts = queue_counts(conn, "alice")
    assert (counts.awaiting, counts.routed, counts.for_reviewer) == (4, 1, 4)

    first, second, third, fourth = corpus
    disagree = next(c for c in _view(review_db, first.card_id).candidates if c.machine_confidence is None)
    _vote(review_db, first.card_id, "alice", disagree.scryfall_id)  # one person against the machines: undecided
    assert card_state(review_db, first.card_id) == ("unresolved", None)
    _vote(review_db, second.card_id, "root", second.truth_scryfall, admin=True)  # weight 5: resolved
    _sql(review_db, "UPDATE card SET missing_since = now() WHERE id = :id", id=third.card_id)
    _sql(review_db, "UPDATE card SET content_sha256 = repeat('f', 64) WHERE id = :id", id=fourth.card_id)  # new bytes

    assert [e.card_id for e in _queue(review_db)] == [first.card_id]
    assert _queue(review_db, reviewer="alice", unvoted_only=True) == []
    (mine,) = _queue(review_db, reviewer="alice")
    assert mine.voted_by_reviewer
    assert [e.card_id for e in _queue(review_db, reviewer="bob", unvoted_only=True)] == [first.card_id]
    states = {scan.scenario + str(i): _view(review_db, scan.card_id).queue_state for i, scan in enumerate(corpus)}
    assert states == {"clean0": "awaiting", "no-text1": "resolved", "clean2": "missing", "no-evidence3": "pending"}


def test_the_card_view_puts_the_machines_pick_on_key_1_and_shows_the_evidence(review_db, corpus):
    clean = next(scan for scan in corpus if scan.scenario == "clean")
    view = _view(review_db, clean.card_id)
    assert view.awaiting and not view.routed and view.machine_picks
    assert view.candidates[0].key == "1" and view.candidates[0].printing_id == view.machine_picks[0].printing_id
    assert view.candidates[0].printing_id == clean.truth
    assert len(view.candidates) > 1 and all(c.set_name for c in view.candidates)
    assert view.candidates[0].symbol_distance is not None and view.candidates[0].symbol_distance <= 3
    assert view.evidence["collector_number"] and view.consensus_reason

    routed = next(scan for scan in corpus if scan.scenario == "no-evidence")
    view = _view(review_db, routed.card_id)
    assert view.routed and view.why and not view.machine_picks
    assert "join-key" in view.calculator_detail
    assert _view(review_db, 10_000) is None


def test_two_reviewers_are_handed_different_cards_and_an_abandoned_claim_expires(review_db, corpus):
    ids = [scan.card_id for scan in corpus]
    alice = claim_next(get_engine(review_db), "alice", 60)
    bob = claim_next(get_engine(review_db), "bob", 60)
    assert (alice.card_id, alice.then, bob.card_id) == (ids[0], ids[1], ids[1])
    with get_engine(review_db).connect() as conn:
        assert queue_counts(conn, "carol").open_by_others == 2 and queue_counts(conn, "alice").open_by_others == 1
    assert claim_next(get_engine(review_db), "alice", 60).card_id == ids[0]  # reloading keeps your card
    assert claim_next(get_engine(review_db), "alice", 60, exclude=[ids[0]]).card_id == ids[2]  # a skip moves on
    _sql(review_db, "UPDATE review_claim SET expires_at = now() - interval '1 second' WHERE reviewer = 'alice'")
    assert claim_next(get_engine(review_db), "carol", 60).card_id == ids[0]  # alice's expired claim is free again
    with get_engine(review_db).begin() as conn:
        release(conn, ids[1], "alice")  # someone else's claim is not yours to release
    assert claim_next(get_engine(review_db), "dave", 60).card_id == ids[2]
    with get_engine(review_db).begin() as conn:
        release(conn, ids[1], "bob")
    assert claim_next(get_engine(review_db), "erin", 60).card_id == ids[1]
    assert claim_next(get_engine(review_db), "frank", 60).card_id == ids[3]
    assert claim_next(get_engine(review_db), "gina", 60).card_id is None  # everything is open by someone


def test_a_reviewers_open_list_leaves_out_another_reviewers_card_and_keeps_their_own(review_db, corpus):
    """The list `claim_next` picks from, with two reviewers' claims present: bob's card is left out of alice's list
    (and carol's), alice's own stays in hers."""
    ids = [scan.card_id for scan in corpus]
    with get_engine(review_db).begin() as conn:
        assert claim(conn, ids[0], "bob", 60) is None and claim(conn, ids[1], "alice", 60) is None

    def open_for(reviewer: str) -> list[int]:
        return [e.card_id for e in _queue(review_db, reviewer=reviewer, unvoted_only=True, unclaimed_by_others=True)]

    assert open_for("alice") == [i for i in ids if i != ids[0]]
    assert open_for("carol") == ids[2:]
    assert [e.card_id for e in _queue(review_db, reviewer="alice", unvoted_only=True)] == ids, "without the option"


def test_the_card_view_reads_its_own_cards_source_and_stage_c_skip_beside_another_cards(review_db, corpus):
    """Two cards of two sources, both with Stage C skips logged for the same bytes' key: each view shows its own."""
    first, second = (scan.card_id for scan in corpus[:2])
    _sql(review_db, "INSERT INTO source (key, location) VALUES ('second', '/second')")
    _sql(review_db, "UPDATE card SET source_id = (SELECT id FROM source WHERE key = 'second') WHERE id = :c", c=second)
    _sql(review_db, "DELETE FROM image_evidence WHERE card_id = :c", c=first)
    for card, reason in ((first, "unreadable-image"), (second, "truncated-image")):  # the other card's is newer
        _sql(review_db, "INSERT INTO card_scan_log (card_id, anonymous_id, skip_reason, evidence_key, detail) "
                        "SELECT :c, :voter, :reason, content_sha256, '{}' FROM card WHERE id = :first",
             c=card, voter=STAGE_C_ID, reason=reason, first=first)
    shown, other = _view(review_db, first), _view(review_db, second)
    assert shown.source_key != "second" and other.source_key == "second"
    assert shown.stage_c_skip == "unreadable-image"


def test_a_reviewer_gets_their_own_card_back_though_another_reviewer_holds_an_older_one(review_db, corpus):
    """The card a reviewer holds is found by their name: bob's claim on the oldest card is not alice's."""
    ids = [scan.card_id for scan in corpus]
    with get_engine(review_db).begin() as conn:
        assert claim(conn, ids[0], "bob", 60) is None and claim(conn, ids[2], "alice", 60) is None
    assert claim_next(get_engine(review_db), "alice", 60).card_id == ids[2]
    with get_engine(review_db).connect() as conn:
        assert (holder(conn, ids[0]), holder(conn, ids[2])) == ("bob", "alice")


def test_giving_back_one_card_keeps_the_reviewers_claim_on_another(review_db, corpus):
    ids = [scan.card_id for scan in corpus]
    with get_engine(review_db).begin() as conn:
        assert claim(conn, ids[0], "alice", 60) is None and claim(conn, ids[1], "alice", 60) is None
        release(conn, ids[0], "alice")
        assert (holder(conn, ids[0]), holder(conn, ids[1])) == (None, "alice")


def test_the_card_view_shows_each_machine_picks_confidence_from_its_own_card(review_db, corpus):
    """The same calculator voted the same printing on two cards with different confidences: each view shows its
    card's own."""
    first, other = corpus[0].card_id, corpus[2].card_id
    pick = _view(review_db, first).machine_picks[0]
    _sql(review_db, "INSERT INTO card_printing_tag (card_id, printing_id, is_no_match, anonymous_id, source, "
                    "confidence) VALUES (:c, :p, false, :voter, 'ocr', 0.125)",
         c=other, p=pick.printing_id, voter=pick.voter)
    assert pick.confidence != 0.125
    assert _view(review_db, first).machine_picks[0] == pick
    borrowed = [p for p in _view(review_db, other).machine_picks if p.printing_id == pick.printing_id]
    assert [(p.voter, p.confidence) for p in borrowed] == [(pick.voter, 0.125)]


def test_a_vote_like_one_the_reviewer_cast_on_another_card_is_still_checked(review_db, corpus):
    """Only a repeat of the reviewer's stored vote on this card skips the check: the same vote on another card
    does not."""
    first, second = corpus[0], corpus[1]
    seen = _view(review_db, first.card_id).version
    _vote(review_db, second.card_id, "alice", no_match=True)
    cast_human_vote(get_engine(review_db), first.card_id, "root", scryfall_id=first.truth_scryfall, admin=True)
    with pytest.raises(StaleEntry, match="no longer awaits review: it is resolved"):
        _vote(review_db, first.card_id, "alice", no_match=True, version=seen)
    assert human_votes(review_db, first.card_id) == [(first.card_id, "root", "admin", first.truth, False)]


def test_reviewers_claiming_at_the_same_moment_never_share_a_card(review_db, corpus):
    for round_ in range(5):
        barrier = threading.Barrier(len(corpus))
        got: dict[str, int | None] = {}

        def take(name: str, barrier: threading.Barrier = barrier, got: dict = got) -> None:
            barrier.wait()
            got[name] = claim_next(get_engine(review_db), name, 60).card_id

        threads = [threading.Thread(target=take, args=(f"r{round_}-{i}",)) for i in range(len(corpus))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(got.values()) == sorted(scan.card_id for scan in corpus)
        _sql(review_db, "DELETE FROM review_claim")


def test_the_vote_check_refuses_stale_or_foreign_votes_and_lets_a_repeat_through(review_db, corpus):
    first, second, _, routed = corpus
    seen = _view(review_db, first.card_id).version
    other_name = _sql(review_db, "SELECT scryfall_id FROM printing WHERE name <> :n LIMIT 1", n=first.name).scalar()
    with pytest.raises(NotACandidate, match="not among the candidates"):
        _vote(review_db, first.card_id, "alice", other_name)
    assert human_votes(review_db) == []

    _vote(review_db, first.card_id, "alice", first.truth_scryfall, version=seen)
    # `stage-e vote`
    cast_human_vote(get_engine(review_db), first.card_id, "root", scryfall_id=first.truth_scryfall, admin=True)
    assert card_state(review_db, first.card_id) == ("resolved", first.truth)
    with pytest.raises(StaleEntry, match="no longer awaits review: it is resolved"):
        _vote(review_db, first.card_id, "bob", first.truth_scryfall, version=seen)
    again = _vote(review_db, first.card_id, "alice", first.truth_scryfall, version=seen)  # a double submit
    assert again.write.already_voted == 1
    assert len(human_votes(review_db, first.card_id)) == 2

    before = _view(review_db, routed.card_id).version
    add_evidence(review_db, routed.card_id, collector_raw="~", border_color="black")  # Stage C read it after all
    run_stage_d(get_engine(review_db), [routed.card_id], "rerun")
    assert _view(review_db, routed.card_id).version != before
    with pytest.raises(StaleEntry, match="changed since you opened it"):
        _vote(review_db, routed.card_id, "bob", routed.truth_scryfall, version=before)
    assert human_votes(review_db, routed.card_id) == []
    _vote(review_db, second.card_id, "bob", no_match=True)
    assert human_votes(review_db, second.card_id) == [(second.card_id, "bob", "user", None, True)]


def test_the_card_view_counts_the_copies_a_vote_will_reach(review_db, corpus):
    first, second = corpus[0], corpus[1]
    assert _view(review_db, first.card_id).copies == 1
    _sql(review_db, "UPDATE card SET content_sha256 = (SELECT content_sha256 FROM card WHERE id = :a) WHERE id = :b",
         a=first.card_id, b=second.card_id)
    assert _view(review_db, first.card_id).copies == 2 and _view(review_db, second.card_id).copies == 2
