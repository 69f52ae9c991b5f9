"""The slow-path router's marker, field by field: what a reviewer and the scan log get for a card without a
confident machine hit (each calculator's result described, the evidence summary, the evidence version, the card's
name, hint and kind), for a registry other than the default one, and for a card the work rule names ineligible."""

from __future__ import annotations

from stage_e_dagster.domain.calculators.registry import UNTIL_HIT, Calculator
from stage_e_dagster.domain.calculators.slow_path import (
    SLOW_PATH_ID,
    TO_REVIEW,
    evidence_version_key,
    route,
    run_calculators,
)
from stage_e_dagster.domain.catalog import CardRef, PrintingRef
from stage_e_dagster.domain.decisions import Abstention, Vote
from stage_e_dagster.domain.evidence.model import Evidence

SHA = "0123456789abcdef" + "f" * 48
EVIDENCE = Evidence(collector_raw="0O7/2?", collector_number="007★", set_code_raw="M2O", set_code="m20",
                    copyright_year=2019, border_color="black", truncated=True, content_sha256=SHA,
                    extractor_versions={"hashes": "1", "collector": "2"})
SUMMARY = {"collector_raw": "0O7/2?", "collector_number": "007★", "collector_normalised": "7*",
           "set_code_raw": "M2O", "set_code": "m20", "copyright_year": 2019, "border_color": "black",
           "truncated": True}
CARD = CardRef(4, "Opt", expansion_hint="xln", kind="card")
PRINTING = PrintingRef(9, "s-9", "Opt", "xln", "65")


def _voting(confidence: float):
    def decide(card, evidence, candidates, expansions):
        return Vote(card.id, "stage-d-weak-vote-v1", candidates[0].id, confidence=confidence)
    return decide


def _abstaining(card, evidence, candidates, expansions):
    return Abstention(card.id, "stage-d-shy-v2", "ambiguous", {"candidate_ids": [p.id for p in candidates]})


REGISTRY = (Calculator("stage-d-weak-vote-v1", _voting(0.5), hit_confidence=0.9),
            Calculator("stage-d-shy-v2", _abstaining, runs=UNTIL_HIT),
            Calculator("stage-d-never-v1", _abstaining, hit_confidence=None))


def test_the_evidence_version_is_the_bytes_first_sixteen_hex_digits_and_the_sorted_extractor_versions() -> None:
    assert evidence_version_key(EVIDENCE) == "0123456789abcdef:collector=2;hashes=1"
    assert evidence_version_key(Evidence(extractor_versions={"a": "1"})) == "a=1"
    assert evidence_version_key(None) == "no-evidence"


def test_a_card_without_a_hit_goes_to_review_with_every_result_described() -> None:
    outcome = run_calculators(CARD, EVIDENCE, [PRINTING], {}, REGISTRY)
    marker = outcome.slow_path
    assert isinstance(marker, Abstention)
    assert (marker.card_id, marker.anonymous_id, marker.skip_reason) == (4, SLOW_PATH_ID, TO_REVIEW)
    assert marker.detail == {
        "why": ["weak-vote:vote", "shy:ambiguous", "never:ambiguous"],
        "weak_vote": {"outcome": "vote", "printing_id": 9, "confidence": 0.5},
        "shy": {"outcome": "skip", "reason": "ambiguous", "detail": {"candidate_ids": [9]}},
        "never": {"outcome": "skip", "reason": "ambiguous", "detail": {"candidate_ids": [9]}},
        "evidence": SUMMARY,
        "evidence_version": "0123456789abcdef:collector=2;hashes=1",
        "name": "Opt",
        "expansion_hint": "xln",
        "kind": "card",
    }
    assert [v.anonymous_id for v in outcome.votes] == ["stage-d-weak-vote-v1"]
    assert outcome.labels(REGISTRY) == {"stage-d-weak-vote-v1": "vote", "stage-d-shy-v2": "ambiguous",
                                        "stage-d-never-v1": "ambiguous", SLOW_PATH_ID: TO_REVIEW}


def test_after_a_hit_an_until_hit_calculator_is_not_run_and_the_card_is_not_routed() -> None:
    registry = (Calculator("stage-d-weak-vote-v1", _voting(0.95), hit_confidence=0.9), *REGISTRY[1:])
    outcome = run_calculators(CARD, EVIDENCE, [PRINTING], {}, registry)
    assert outcome.results["stage-d-shy-v2"] is None, "until-hit: skipped after the hit"
    assert isinstance(outcome.results["stage-d-never-v1"], Abstention), "always: runs after the hit"
    assert outcome.slow_path is None
    assert outcome.labels(registry)[SLOW_PATH_ID] == "not-routed"


def test_a_card_without_evidence_is_described_as_such() -> None:
    detail = run_calculators(CARD, None, [PRINTING], {}, REGISTRY).slow_path.detail
    assert (detail["evidence"], detail["evidence_version"]) == (None, "no-evidence")


def test_an_ineligible_card_gets_the_work_rules_reason_from_every_calculator_and_goes_to_review() -> None:
    card = CardRef(5, "Opt", kind="token", ineligible="low-dpi")
    outcome = run_calculators(card, EVIDENCE, [PRINTING], {}, REGISTRY)
    assert outcome.results == {calc.id: Abstention(5, calc.id, "low-dpi", {"ineligible": "low-dpi", "kind": "token"})
                               for calc in REGISTRY}
    marker = outcome.slow_path
    assert marker.detail["why"] == ["ineligible:low-dpi", "weak-vote:low-dpi", "shy:low-dpi", "never:low-dpi"]
    assert (marker.detail["ineligible"], marker.detail["evidence"], marker.detail["kind"]) == (
        "low-dpi", SUMMARY, "token")
    assert set(marker.detail) >= {"weak_vote", "shy", "never"}
    assert outcome.abstentions == [*outcome.results.values(), marker] and outcome.votes == []


def test_a_calculator_that_did_not_run_is_described_as_such() -> None:
    marker = route(CARD, {}, None, REGISTRY)
    assert marker.detail["why"] == ["weak-vote:not-run", "shy:not-run", "never:not-run"]
    assert marker.detail["shy"] == {"outcome": "not-run"}
