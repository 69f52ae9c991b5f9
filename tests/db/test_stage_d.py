"""Stage D end to end on Postgres: evidence built from the demo catalogue's ground truth, run_stage_d, checks."""

from __future__ import annotations

from collections import Counter

import pytest
from sqlalchemy import select

from stage_e_dagster.db.core.engine import get_engine, session_scope
from stage_e_dagster.db.core.models import Card, CardPrintingTag, CardScanLog
from stage_e_dagster.db.judgement.consensus_store import state_counts
from stage_e_dagster.db.judgement.votes import cast_human_vote
from stage_e_dagster.db.review.queue import review_queue, review_queue_size
from stage_e_dagster.domain.calculators import ERA_ID, FALLBACK_ID, JOIN_KEY_ID, SLOW_PATH_ID
from stage_e_dagster.stages.stage_d import run_stage_d
from testkit.corpus import demo_catalogue
from testkit.seed import add_cards, add_evidence, mini_catalog, number_only_evidence, seed_ground_truth
from testkit.sql import rows

WRITTEN = "SELECT (SELECT count(*) FROM card_printing_tag), (SELECT count(*) FROM card_scan_log)"


@pytest.fixture
def seeded(db_url, tmp_path):
    catalog = demo_catalogue(db_url, tmp_path, printings=900, seed=11)
    return seed_ground_truth(db_url, catalog, count=400, seed=5)


def _votes(url):
    with session_scope(get_engine(url)) as s:
        return s.scalars(select(CardPrintingTag)).all()


def test_ground_truth_batch_votes_right_and_routes_the_rest(db_url, db_engine, seeded):
    counters = run_stage_d(db_engine, [c.card_id for c in seeded], "run-1")
    truth = {c.card_id: c.truth for c in seeded}
    votes = _votes(db_url)
    assert votes and all(v.source == "ocr" and v.run_id == "run-1" for v in votes)
    right = sum(1 for v in votes if v.printing_id == truth[v.card_id])
    assert right / len(votes) >= 0.99, f"{len(votes) - right} of {len(votes)} votes are wrong"

    clean = [c for c in seeded if c.scenario == "clean" and c.numbered]  # the era calculator's cards aside
    join_key_voted = {v.card_id for v in votes if v.anonymous_id == JOIN_KEY_ID and not v.is_no_match}
    assert sum(c.card_id in join_key_voted for c in clean) / len(clean) >= 0.90

    confident = {v.card_id for v in votes if not v.is_no_match and (
        (v.anonymous_id == JOIN_KEY_ID and v.confidence >= 0.8) or v.anonymous_id in (ERA_ID, FALLBACK_ID))}
    with session_scope(db_engine) as s:
        markers = {m.card_id: m for m in s.scalars(select(CardScanLog).where(CardScanLog.skip_reason == "to-review"))}
        statuses = Counter(s.scalars(select(Card.printing_status)).all())
    for card in seeded:
        if card.card_id in confident:
            assert card.card_id not in markers
        else:
            marker = markers[card.card_id]
            assert marker.anonymous_id == SLOW_PATH_ID and marker.detail["why"], card
    reasons = {"no-evidence": "join-key:no-evidence", "truncated": "join-key:truncated-image",
               "no-text": "join-key:no-text", "misread-set": "join-key:unknown-set-code"}
    for scenario, why in reasons.items():
        cards = [c for c in seeded if c.scenario == scenario]
        routed = [c for c in cards if c.card_id in markers]
        assert cards, scenario
        assert all(why in markers[c.card_id].detail["why"] for c in routed), scenario
        # Without a set code or number, the fallback's sub-checks (border, symbol, hint) may still identify one.
        assert all(c.card_id in confident for c in cards if c not in routed), scenario
    assert all(c.card_id in markers for c in seeded if c.scenario in ("no-evidence", "truncated"))
    assert markers[next(c.card_id for c in seeded if c.scenario == "no-evidence")].evidence_key == "no-evidence"

    assert counters["cards_processed"] == len(seeded) and counters["cards_missing"] == 0
    assert counters["votes_cast"] == len(votes) == counters["vote_groups_inserted"]
    assert counters["routed_to_review"] == counters["review_markers_new"] == len(markers)
    assert counters["skips"][JOIN_KEY_ID]["unknown-set-code"] >= 1
    assert statuses == {"unresolved": len(seeded)}  # funnel: machines alone never resolve
    with db_engine.connect() as conn:
        assert review_queue_size(conn) == len(markers)
        assert {item.card_id for item in review_queue(conn, limit=10_000)} == set(markers)


def test_sequential_rerun_writes_nothing(db_url, db_engine, seeded):
    ids = [c.card_id for c in seeded]
    first = run_stage_d(db_engine, ids, "run-1")
    before = rows(db_url, WRITTEN)
    again = run_stage_d(db_engine, ids, "run-2")
    assert rows(db_url, WRITTEN) == before
    groups = first["vote_groups_inserted"]
    assert (again["already_voted"], again["votes_cast"], again["votes_removed"]) == (groups, 0, 0)
    assert again["abstentions_logged"] == again["review_markers_new"] == again["consensus_changed"] == 0
    assert again["abstentions_unchanged"] == first["abstentions_logged"]
    assert again["outcomes"] == first["outcomes"]


def test_missing_cards_and_empty_batches_are_counted_not_raised(db_engine, seeded):
    counters = run_stage_d(db_engine, [seeded[0].card_id, 10**9], "run-1")
    assert (counters["cards"], counters["cards_processed"], counters["cards_missing"]) == (2, 1, 1)
    assert run_stage_d(db_engine, [], "run-2")["cards_processed"] == 0
    with pytest.raises(ValueError, match="unknown consensus policy"):
        run_stage_d(db_engine, [seeded[0].card_id], "run-3", policy="majority")


def test_a_batch_votes_on_and_counts_only_its_own_cards(db_url, db_engine):
    """Two cards that would both get votes, and a third already resolved: a batch of the first touches it alone,
    and the batch's consensus counts are its own cards'."""
    mini_catalog(db_url)
    first, second, third = add_cards(db_url, [(f"Opt ({i}).png", "Opt", None) for i in range(3)])
    for card in (first, second):
        add_evidence(db_url, card, **number_only_evidence())
    cast_human_vote(db_engine, third, "root", scryfall_id="sf-bbb-40", admin=True)
    run_stage_d(db_engine, [first], "run-1")
    assert rows(db_url, "SELECT DISTINCT card_id FROM card_printing_tag WHERE source = 'ocr'") == [(first,)]
    assert rows(db_url, "SELECT count(*) FROM card_scan_log WHERE card_id <> %s", (first,)) == [(0,)]
    with db_engine.connect() as conn:
        assert state_counts(conn, [first, second]) == {"resolved": 0, "no_match": 0, "unresolved": 2}
        assert state_counts(conn, [third]) == {"resolved": 1, "no_match": 0, "unresolved": 0}
