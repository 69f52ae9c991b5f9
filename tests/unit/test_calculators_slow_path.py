"""The slow-path router, the evidence version key and the one-card Stage D pipeline."""

from __future__ import annotations

from datetime import date

from stage_e_dagster.domain.calculators import (
    ERA_ID,
    FALLBACK_ID,
    JOIN_KEY_ID,
    SLOW_PATH_ID,
    TO_REVIEW,
    evidence_version_key,
    route,
    run_calculators,
)
from stage_e_dagster.domain.catalog import CardRef, ExpansionRef, PrintingRef
from stage_e_dagster.domain.decisions import Abstention, Vote
from stage_e_dagster.domain.evidence.model import Evidence

EXPANSIONS = {
    "m10": ExpansionRef("m10", date(2009, 7, 17)),
    "m11": ExpansionRef("m11", date(2010, 7, 16)),
    "znr": ExpansionRef("znr", date(2020, 9, 25)),
}
P_M10 = PrintingRef(1, "a", "Shock", "m10", "146", border_color="black")
P_M11 = PrintingRef(2, "b", "Shock", "m11", "146", border_color="black")
CANDIDATES = [P_M10, P_M11]
CARD = CardRef(7, "Shock")
VERSIONS = {"legal": "1", "collector": "2", "hashes": "1"}


def ev(**fields: object) -> Evidence:
    return Evidence(extractor_versions=dict(VERSIONS), **fields)  # type: ignore[arg-type]


def test_evidence_version_key_is_sorted_and_stable() -> None:
    assert evidence_version_key(ev()) == "collector=2;hashes=1;legal=1"
    bumped = Evidence(extractor_versions={**VERSIONS, "collector": "3"})
    assert evidence_version_key(bumped) != evidence_version_key(ev())
    assert evidence_version_key(None) == "no-evidence"


def test_route_passes_a_confident_join_key_hit() -> None:
    assert route(CARD, {JOIN_KEY_ID: Vote(CARD.id, JOIN_KEY_ID, 1, confidence=0.85)}, ev()) is None


def test_route_passes_a_fallback_vote() -> None:
    join_key = Abstention(CARD.id, JOIN_KEY_ID, "ambiguous")
    fallback = Vote(CARD.id, FALLBACK_ID, 1, confidence=0.7)
    assert route(CARD, {JOIN_KEY_ID: join_key, FALLBACK_ID: fallback}, ev()) is None


def test_route_sends_no_match_and_skips_to_review_with_the_evidence_summary() -> None:
    join_key = Vote(CARD.id, JOIN_KEY_ID, None, is_no_match=True, confidence=0.6)
    fallback = Abstention(CARD.id, FALLBACK_ID, "ambiguous", {"survivor_ids": [1, 2]})
    evidence = ev(collector_number="146", set_code="znr", set_code_raw="ZNR", copyright_year=2020)
    marker = route(CARD, {JOIN_KEY_ID: join_key, FALLBACK_ID: fallback}, evidence)
    assert marker is not None
    assert (marker.skip_reason, marker.anonymous_id, marker.card_id) == (TO_REVIEW, SLOW_PATH_ID, CARD.id)
    detail = marker.detail
    assert detail["why"] == ["join-key:no-match", "era:not-run", "fallback:ambiguous"]
    assert detail["fallback"] == {"outcome": "skip", "reason": "ambiguous", "detail": {"survivor_ids": [1, 2]}}
    assert detail["evidence"]["collector_number"] == "146"
    assert (detail["evidence"]["set_code_raw"], detail["evidence"]["set_code"]) == ("ZNR", "znr")
    assert detail["evidence"]["copyright_year"] == 2020
    assert detail["evidence_version"] == "collector=2;hashes=1;legal=1"


def test_route_without_evidence_still_marks_the_card() -> None:
    marker = route(CARD, {JOIN_KEY_ID: Abstention(CARD.id, JOIN_KEY_ID, "no-evidence")}, None)
    assert marker is not None and marker.detail["evidence"] is None
    assert marker.detail["why"] == ["join-key:no-evidence", "era:not-run", "fallback:not-run"]


def test_run_calculators_confident_hit_writes_one_vote() -> None:
    outcome = run_calculators(CARD, ev(collector_number="146", set_code="m10"), CANDIDATES, EXPANSIONS)
    assert [(v.anonymous_id, v.printing_id) for v in outcome.votes] == [(JOIN_KEY_ID, P_M10.id)]
    assert outcome.abstentions == [] and outcome.results[FALLBACK_ID] is None and outcome.slow_path is None
    assert outcome.labels() == {JOIN_KEY_ID: "vote", ERA_ID: "not-run", FALLBACK_ID: "not-run",
                                SLOW_PATH_ID: "not-routed"}


def test_run_calculators_without_a_hit_routes_to_review() -> None:
    outcome = run_calculators(CARD, ev(collector_number="146", border_color="black"), CANDIDATES, EXPANSIONS)
    assert outcome.votes == []
    assert [(a.anonymous_id, a.skip_reason) for a in outcome.abstentions] == [
        (JOIN_KEY_ID, "ambiguous"), (ERA_ID, "numbered"), (FALLBACK_ID, "ambiguous"), (SLOW_PATH_ID, TO_REVIEW),
    ]
    assert outcome.labels()[SLOW_PATH_ID] == TO_REVIEW


def test_run_calculators_fallback_rescues_an_ambiguous_join_key() -> None:
    card = CardRef(CARD.id, CARD.name, expansion_hint="m11")
    outcome = run_calculators(card, ev(collector_number="146", border_color="black"), CANDIDATES, EXPANSIONS)
    assert [(v.anonymous_id, v.printing_id, v.confidence) for v in outcome.votes] == [(FALLBACK_ID, P_M11.id, 0.8)]
    assert [a.skip_reason for a in outcome.abstentions] == ["ambiguous", "numbered"]
    assert outcome.slow_path is None


def test_run_calculators_no_match_vote_is_written_and_reviewed() -> None:
    # Every set has a reference symbol and the scan's symbol is znr's: the join-key's cross-checks hold.
    references = {"m10": 0, "m11": (1 << 20) - 1, "znr": ((1 << 20) - 1) << 40}
    symbols = {code: ExpansionRef(e.code, e.released_at, references[code]) for code, e in EXPANSIONS.items()}
    evidence = ev(collector_number="77", set_code="znr", symbol_phash=references["znr"])
    outcome = run_calculators(CARD, evidence, CANDIDATES, symbols)
    assert [v.is_no_match for v in outcome.votes] == [True]
    # the era calculator does not apply to a card with no old copyright year; the symbol rules both printings out
    assert [a.skip_reason for a in outcome.abstentions] == ["not-numberless-era", "eliminated", TO_REVIEW]


def test_evidence_version_key_changes_with_the_bytes_and_the_versions() -> None:
    from stage_e_dagster.domain.calculators.slow_path import evidence_version_key

    base = Evidence(extractor_versions={"collector": "collector-v1", "hashes": "hashes-v1"}, content_sha256="ab" * 32)
    same = Evidence(extractor_versions={"hashes": "hashes-v1", "collector": "collector-v1"}, content_sha256="ab" * 32)
    new_bytes = Evidence(extractor_versions=dict(base.extractor_versions), content_sha256="cd" * 32)
    new_version = Evidence(extractor_versions={**base.extractor_versions, "hashes": "hashes-v2"},
                           content_sha256="ab" * 32)
    keys = {evidence_version_key(e) for e in (base, new_bytes, new_version)}
    assert evidence_version_key(base) == evidence_version_key(same) and len(keys) == 3
