"""Human side of Stage D: `review list`, `vote`, and consensus under both policies as stored on `card`."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from sqlalchemy import select

from stage_e_dagster.commands.review import review, vote
from stage_e_dagster.db.core.engine import get_engine, session_scope
from stage_e_dagster.db.core.models import Card, CardPrintingTag
from stage_e_dagster.db.review.queue import review_queue, routed_among
from stage_e_dagster.stages.stage_d import run_stage_d
from testkit.seed import add_cards, add_evidence, mini_catalog, number_only_evidence


@pytest.fixture
def cli(db_url, monkeypatch):
    monkeypatch.setenv("STAGE_E_DATABASE_URL", db_url)
    monkeypatch.delenv("STAGE_E_CONSENSUS_POLICY", raising=False)
    runner = CliRunner()

    def invoke(command, *args):
        return runner.invoke(command, [str(a) for a in args], catch_exceptions=False)

    return invoke


@pytest.fixture
def cards(db_url):
    """Printings of "Opt" and three cards: `agreed` (two machine voters agree on bbb #40), `unreadable` (no
    collector text, no symbol: routed), `unknown` (no evidence at all: routed)."""
    printings = mini_catalog(db_url)
    ids = add_cards(db_url, [("Opt (1).png", "Opt", None), ("Opt [ZZZ] (2).png", "Opt", "zzz"),
                             ("Opt (3).png", "Opt", None)])
    add_evidence(db_url, ids[0], **number_only_evidence())
    add_evidence(db_url, ids[1], collector_raw="~~", set_code_raw="CC?", border_color="black",
                 copyright_year=2019)
    return {"agreed": ids[0], "unreadable": ids[1], "unknown": ids[2], **printings}


def _state(url, card_id):
    with session_scope(get_engine(url)) as s:
        card = s.get(Card, card_id)
        return card.printing_status, card.resolved_printing_id


def test_machine_votes_alone_never_resolve_under_funnel_but_do_under_machine_quorum(db_url, db_engine, cards):
    ids = [cards["agreed"], cards["unreadable"], cards["unknown"]]
    counters = run_stage_d(db_engine, ids, "run-1")
    assert counters["cards_resolved"] == 0 and _state(db_url, cards["agreed"]) == ("unresolved", None)
    quorum = run_stage_d(db_engine, ids, "run-2", policy="machine-quorum")
    assert (quorum["cards_resolved"], quorum["newly_resolved"], quorum["votes_cast"]) == (1, 1, 0)
    assert _state(db_url, cards["agreed"]) == ("resolved", cards["bbb-40"])
    assert _state(db_url, cards["unreadable"]) == ("unresolved", None)
    back = run_stage_d(db_engine, ids, "run-3")  # the policy is applied on every recompute
    assert back["consensus_changed"] == 1 and _state(db_url, cards["agreed"]) == ("unresolved", None)


def test_one_user_vote_plus_agreeing_machines_resolves(db_url, db_engine, cards, cli):
    run_stage_d(db_engine, [cards["agreed"]], "run-1")
    result = cli(vote, cards["agreed"], "--printing", "sf-bbb-40", "--user", "alice")
    assert result.exit_code == 0, result.output
    assert "recorded" in result.output and "consensus (funnel): resolved" in result.output
    assert _state(db_url, cards["agreed"]) == ("resolved", cards["bbb-40"])
    again = cli(vote, cards["agreed"], "--printing", "sf-bbb-40", "--user", "alice")
    assert "already voted" in again.output


def test_a_new_human_vote_replaces_that_users_previous_one(db_url, db_engine, cards, cli):
    card = cards["unknown"]
    assert cli(vote, card, "--printing", "sf-aaa-12", "--user", "bob").exit_code == 0
    assert _state(db_url, card) == ("unresolved", None)  # one user (weight 1) is not enough alone
    result = cli(vote, card, "--no-match", "--user", "bob", "--admin")
    assert result.exit_code == 0 and "no_match" in result.output
    with session_scope(db_engine) as s:
        votes = s.scalars(select(CardPrintingTag).where(CardPrintingTag.card_id == card)).all()
        assert [(v.anonymous_id, v.source, v.printing_id, v.is_no_match) for v in votes] == [
            ("bob", "admin", None, True)]
    assert _state(db_url, card) == ("no_match", None)


def test_review_list_shows_routed_unresolved_cards_with_their_reasons(db_engine, cards, cli):
    run_stage_d(db_engine, [cards["agreed"], cards["unreadable"], cards["unknown"]], "run-1")
    listed = cli(review, "list")
    assert listed.exit_code == 0, listed.output
    out = listed.output
    assert out.startswith("2 cards awaiting review (showing 2)")
    assert f"card {cards['unreadable']}  Opt [ZZZ] (2).png" in out and f"card {cards['unknown']}  " in out
    assert f"card {cards['agreed']} " not in out  # identified by the machines: not in the queue
    assert "join-key:no-text" in out and "join-key:no-evidence" in out and "read: no evidence" in out
    assert "set 'CC?'" in out and "copyright 2019" in out and "hint: 'zzz'" in out
    assert cli(review, "list", "--limit", "1").output.startswith("2 cards awaiting review (showing 1)")

    cli(vote, cards["unknown"], "--no-match", "--user", "carol", "--admin")  # resolved cards leave the queue
    assert cli(review, "list").output.startswith("1 card awaiting review (showing 1)")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["999999", "--printing", "sf-aaa-12", "--user", "dan"], "no card has id 999999"),
        (["{card}", "--printing", "nope", "--user", "dan"], "no printing has Scryfall id 'nope'"),
        (["{card}", "--printing", "sf-aaa-12", "--no-match", "--user", "dan"], "exactly one of"),
        (["{card}", "--user", "dan"], "exactly one of"),
        (["{card}", "--no-match", "--user", "stage-d-join-key-v1"], "reserved for machine voters"),
        (["{card}", "--no-match"], "Missing option '--user'"),
    ],
)
def test_vote_rejects_bad_input_with_a_clear_error(db_engine, cards, cli, args, message):
    result = cli(vote, *(a.format(card=cards["unknown"]) for a in args))
    assert result.exit_code != 0
    assert message in result.output
    with session_scope(db_engine) as s:
        assert s.scalars(select(CardPrintingTag)).all() == []


def test_the_queue_counts_each_items_own_human_votes_and_copies_beside_another_routed_card(db_engine, cards, cli):
    run_stage_d(db_engine, [cards["agreed"], cards["unreadable"], cards["unknown"]], "run-1")
    assert cli(vote, cards["unknown"], "--printing", "sf-aaa-12", "--user", "bob").exit_code == 0
    with db_engine.connect() as conn:
        items = {item.card_id: (item.human_votes, item.copies) for item in review_queue(conn)}
    assert items == {cards["unreadable"]: (0, 1), cards["unknown"]: (1, 1)}


def test_the_routed_cards_of_a_batch_are_only_the_batchs_own(db_engine, cards):
    run_stage_d(db_engine, [cards["agreed"], cards["unreadable"], cards["unknown"]], "run-1")
    with db_engine.connect() as conn:
        assert [r.card_id for r in routed_among(conn, [cards["unknown"], cards["agreed"]])] == [cards["unknown"]]
        assert [r.card_id for r in routed_among(conn, [cards["unreadable"]])] == [cards["unreadable"]]
