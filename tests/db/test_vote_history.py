"""Calculator families and the vote archive: a version bump retires the older version's votes in the deciding
transaction, consensus never counts two versions of one family, and every vote that leaves is archived."""

from __future__ import annotations

import dataclasses

import psycopg2
import pytest
from click.testing import CliRunner

from stage_e_dagster.commands.review import review
from stage_e_dagster.db.judgement.consensus_store import recompute_consensus
from stage_e_dagster.db.judgement.vote_archive import Removal, archive_votes, card_history
from stage_e_dagster.db.judgement.votes import cast_human_vote, write_vote_groups
from stage_e_dagster.domain.calculators import CALCULATORS, FALLBACK_ID, JOIN_KEY_ID, Calculator, decide_join_key
from stage_e_dagster.domain.consensus import CastVote, resolve
from stage_e_dagster.domain.stage_d import ProposedVote, VoteGroup
from stage_e_dagster.domain.voters import REPLACED, newest_per_family, superseded
from stage_e_dagster.stages.stage_d import run_stage_d
from testkit.seed import add_cards, add_evidence, mini_catalog, number_only_evidence
from testkit.sql import rows

JOIN_KEY_NEXT = "stage-d-join-key-v{}".format(int(JOIN_KEY_ID.rsplit("-v", 1)[1]) + 1)  # the next version


def decide_join_key_v2(card, evidence, candidates, expansions):
    """Version 2 of join-key: the same rule, under its new voter id."""
    return dataclasses.replace(decide_join_key(card, evidence, candidates, expansions), anonymous_id=JOIN_KEY_NEXT)


BUMPED = (Calculator(JOIN_KEY_NEXT, decide_join_key_v2, hit_confidence=CALCULATORS[0].hit_confidence), CALCULATORS[1])


def machine(printing_id: int, voter: str) -> CastVote:
    return CastVote(printing_id, False, "ocr", voter)


def test_family_rules_are_pure_and_only_for_machine_voters() -> None:
    assert superseded(["stage-d-a-v1", "stage-d-a-v3", "stage-d-b-v1", "alice"], ["stage-d-a-v2"]) == {
        "stage-d-a-v1": "stage-d-a-v2"}
    assert newest_per_family(["stage-d-a-v1", "stage-d-a-v10", "stage-d-b-v2", "odd id"]) == {
        "stage-d-a-v10", "stage-d-b-v2", "odd id"}
    # Two versions of one calculator are one voter: no quorum. Two families are two voters.
    assert resolve([machine(1, JOIN_KEY_ID), machine(1, JOIN_KEY_NEXT)], "machine-quorum").printing_status == \
        "unresolved"
    assert resolve([machine(1, JOIN_KEY_NEXT), machine(1, FALLBACK_ID)], "machine-quorum").resolved_printing_id == 1
    # Human names are never families: "sam-v1" and "sam-v2" are two people.
    humans = [CastVote(1, False, "user", "sam-v1"), CastVote(1, False, "user", "sam-v2")]
    assert resolve(humans).resolved_printing_id == 1


@pytest.fixture
def weak(db_url):
    """"Opt" with its number read and nothing else: join-key's weak number-only vote, the fallback abstains."""
    printings = mini_catalog(db_url)
    (card,) = add_cards(db_url, [("Opt.png", "Opt", None)])
    add_evidence(db_url, card, **number_only_evidence(border_color=None, symbol_phash=None, copyright_year=None))
    return card, printings


def test_a_version_bump_under_machine_quorum_retires_the_old_votes_and_never_double_counts(db_url, db_engine, weak,
                                                                                           pg_connect):
    card, p = weak
    first = run_stage_d(db_engine, [card], "run-1", policy="machine-quorum")
    assert first["outcomes"][JOIN_KEY_ID] == {"vote": 1} and first["outcomes"][FALLBACK_ID] != {"vote": 1}
    assert rows(db_url, "SELECT anonymous_id, printing_id FROM card_printing_tag") == [(JOIN_KEY_ID, p["bbb-40"])]
    assert rows(db_url, "SELECT printing_status FROM card") == [("unresolved",)]  # one voter, no quorum

    # The bumped calculator decides: within the deciding transaction the old vote is still there; at commit it
    # has moved to the archive and the new version's vote replaced it, never both visible.
    observer = pg_connect()
    with db_engine.connect() as conn:
        transaction = conn.begin()
        result = write_vote_groups(conn, [VoteGroup(card, JOIN_KEY_NEXT, (ProposedVote(p["bbb-40"], False, "ocr",
                                                                                       0.75),))], "run-2")
        assert (result.retired, result.inserted, result.votes_removed) == (1, 1, 1)
        with observer.cursor() as cur:
            cur.execute("SELECT anonymous_id FROM card_printing_tag")
            assert cur.fetchall() == [(JOIN_KEY_ID,)]
        transaction.rollback()
    assert rows(db_url, "SELECT count(*) FROM card_printing_tag_archive") == [(0,)]  # a rollback archives nothing

    second = run_stage_d(db_engine, [card], "run-2", policy="machine-quorum", registry=BUMPED)
    assert (second["vote_groups_retired"], second["vote_groups_inserted"]) == (1, 1)
    assert rows(db_url, "SELECT anonymous_id, printing_id, run_id FROM card_printing_tag") == [
        (JOIN_KEY_NEXT, p["bbb-40"], "run-2")]
    assert rows(db_url, "SELECT anonymous_id, printing_id, vote_run_id, reason, run_id, detail->>'superseded_by' "
                        "FROM card_printing_tag_archive") == [
        (JOIN_KEY_ID, p["bbb-40"], "run-1", "family-bump", "run-2", JOIN_KEY_NEXT)]
    assert rows(db_url, "SELECT printing_status FROM card") == [("unresolved",)]

    # An old deployment still running writes a v1 vote after the bump: it retires nothing newer, and consensus
    # does not count it beside v2. The next v2 pass retires it again.
    with db_engine.begin() as conn:
        stale = write_vote_groups(conn, [VoteGroup(card, JOIN_KEY_ID, (ProposedVote(p["bbb-40"], False, "ocr",
                                                                                      0.75),))], "old-run")
        assert (stale.inserted, stale.retired) == (1, 0)
        _, resolutions = recompute_consensus(conn, [card], "machine-quorum")
    assert resolutions[card].printing_status == "unresolved"
    third = run_stage_d(db_engine, [card], "run-3", policy="machine-quorum", registry=BUMPED)
    assert third["vote_groups_retired"] == 1
    assert rows(db_url, "SELECT anonymous_id FROM card_printing_tag") == [(JOIN_KEY_NEXT,)]


def test_every_vote_that_leaves_is_archived_with_why_and_review_show_prints_it(db_url, db_engine, weak, monkeypatch,
                                                                                 pg_connect):
    card, p = weak
    write = db_engine.begin

    def machine_group(*printings: int) -> VoteGroup:
        return VoteGroup(card, JOIN_KEY_ID, tuple(ProposedVote(x, False, "ocr", 0.8) for x in printings))

    with write() as conn:
        write_vote_groups(conn, [machine_group(p["aaa-12"])], "r1")
    with write() as conn:
        write_vote_groups(conn, [machine_group(p["aaa-12"])], "r2")  # the same conclusion: nothing archived
    with write() as conn:
        write_vote_groups(conn, [machine_group(p["ccc-12"])], "r3")
    with write() as conn:
        write_vote_groups(conn, [machine_group()], "r4")
    cast_human_vote(db_engine, card, "bob", scryfall_id="sf-aaa-12")
    cast_human_vote(db_engine, card, "bob", scryfall_id="sf-aaa-12")
    cast_human_vote(db_engine, card, "bob", no_match=True, admin=True)
    assert rows(db_url, "SELECT anonymous_id, source, printing_id, is_no_match, vote_run_id, reason, run_id "
                        "FROM card_printing_tag_archive ORDER BY id") == [
        (JOIN_KEY_ID, "ocr", p["aaa-12"], False, "r1", "replaced", "r3"),
        (JOIN_KEY_ID, "ocr", p["ccc-12"], False, "r3", "withdrawn", "r4"),
        ("bob", "user", p["aaa-12"], False, None, "human-override", None),
    ]

    raw = pg_connect()
    for statement in ("UPDATE card_printing_tag_archive SET reason = 'replaced'",
                      "DELETE FROM card_printing_tag_archive", "TRUNCATE card_printing_tag_archive"):
        with pytest.raises(psycopg2.Error, match="append-only"):
            raw.cursor().execute(statement)
    assert rows(db_url, "SELECT count(*) FROM card_printing_tag_archive") == [(3,)]

    monkeypatch.setenv("STAGE_E_DATABASE_URL", db_url)
    shown = CliRunner().invoke(review, ["show", str(card)], catch_exceptions=False)
    assert shown.exit_code == 0, shown.output
    out = shown.output
    assert out.startswith(f"card {card}  Opt.png") and "consensus: no_match" in out
    current, history = out.split("archived votes")
    assert "bob (admin): no match" in current and "stage-d-join-key-v1" not in current
    assert history.index("replaced") < history.index("withdrawn") < history.index("human-override")
    assert "aaa #12 (sf-aaa-12)" in history and "run r1, archived by run r3" in history
    missing = CliRunner().invoke(review, ["show", "999999"])
    assert missing.exit_code != 0 and "no card has id 999999" in missing.output


def test_archiving_a_voters_vote_on_one_card_leaves_that_voters_votes_on_other_cards(db_url, db_engine):
    """Two cards with votes by the same two voters: archiving one (card, voter) moves that vote alone, and each
    card's history shows its own votes, current and archived."""
    mini_catalog(db_url)
    first, second = add_cards(db_url, [("Opt (1).png", "Opt", None), ("Opt (2).png", "Opt", None)])
    for card in (first, second):
        for voter in ("alice", "bob"):
            cast_human_vote(db_engine, card, voter, scryfall_id="sf-aaa-12")
    with db_engine.begin() as conn:
        assert archive_votes(conn, [Removal(first, "alice", REPLACED)], "run-1") == 1
    assert rows(db_url, "SELECT card_id, anonymous_id FROM card_printing_tag ORDER BY 1, 2") == [
        (first, "bob"), (second, "alice"), (second, "bob")]
    assert rows(db_url, "SELECT card_id, anonymous_id, reason FROM card_printing_tag_archive") == [
        (first, "alice", REPLACED)]
    with db_engine.connect() as conn:
        one, two = card_history(conn, first), card_history(conn, second)
    assert [(v.anonymous_id, v.reason) for v in one.archived] == [("alice", REPLACED)] and two.archived == []
    assert [v.anonymous_id for v in one.current] == ["bob"] and [v.anonymous_id for v in two.current] == [
        "alice", "bob"]
