"""The slow-path router and the Stage D pipeline for one card: the registry's calculators, then routing to review.

Every card without a confident machine hit is marked `to-review` with what a reviewer needs to act on it. The
marker carries the evidence version key, so the persistence layer records a card once per evidence version.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from stage_e_dagster.domain.calculators.matching import normalise_collector_number
from stage_e_dagster.domain.calculators.registry import CALCULATORS, UNTIL_HIT, Calculator, Result
from stage_e_dagster.domain.catalog import CardRef, ExpansionRef, PrintingRef
from stage_e_dagster.domain.decisions import Abstention, Vote
from stage_e_dagster.domain.evidence.model import Evidence
from stage_e_dagster.domain.kinds import CARD_BACK, printing_fits

SLOW_PATH_ID = "stage-d-slow-path-v1"
TO_REVIEW = "to-review"
NO_EVIDENCE_VERSION = "no-evidence"


def evidence_version_key(evidence: Evidence | None) -> str:
    """Stable key of the bytes and extractor versions behind evidence, e.g. `3f2a9c0d1e2b4a5f:collector=2;hashes=1`:
    new bytes or a new extractor version is a new evidence version, routed to review afresh."""
    if evidence is None:
        return NO_EVIDENCE_VERSION
    versions = ";".join(f"{name}={version}" for name, version in sorted(evidence.extractor_versions.items()))
    return f"{evidence.content_sha256[:16]}:{versions}" if evidence.content_sha256 else versions


def outcome_label(result: Result) -> str:
    """Short label of a calculator result for counters: `vote`, `no-match`, a skip reason, or `not-run`."""
    if result is None:
        return "not-run"
    if isinstance(result, Vote):
        return "no-match" if result.is_no_match else "vote"
    return result.skip_reason


def describe(result: Result) -> dict[str, Any]:
    """A calculator result as JSON-ready detail for the review marker."""
    if result is None:
        return {"outcome": "not-run"}
    if isinstance(result, Vote):
        return {"outcome": outcome_label(result), "printing_id": result.printing_id,
                "confidence": result.confidence}
    return {"outcome": "skip", "reason": result.skip_reason, "detail": result.detail}


def evidence_summary(evidence: Evidence | None) -> dict[str, Any] | None:
    """The evidence fields a reviewer checks first, or None when the card has no evidence."""
    if evidence is None:
        return None
    return {
        "collector_raw": evidence.collector_raw,
        "collector_number": evidence.collector_number,
        "collector_normalised": normalise_collector_number(evidence.collector_number),
        "set_code_raw": evidence.set_code_raw,
        "set_code": evidence.set_code,
        "copyright_year": evidence.copyright_year,
        "border_color": evidence.border_color,
        "truncated": evidence.truncated,
    }


def route(card: CardRef, results: Mapping[str, Result], evidence: Evidence | None,
          registry: Sequence[Calculator] = CALCULATORS) -> Abstention | None:
    """Mark a card without a confident machine hit `to-review`, explaining why; None when it has a hit.

    `results` holds each calculator's result by id (None, or missing, for one that did not run).
    """
    if any(calc.is_hit(results.get(calc.id)) for calc in registry):
        return None
    why = [f"{calc.label}:{outcome_label(results.get(calc.id))}" for calc in registry]
    detail: dict[str, Any] = {
        "why": [f"ineligible:{card.ineligible}", *why] if card.ineligible is not None else why,
        **{calc.label.replace("-", "_"): describe(results.get(calc.id)) for calc in registry},
        "evidence": evidence_summary(evidence),
        "evidence_version": evidence_version_key(evidence),
        "name": card.name,
        "expansion_hint": card.expansion_hint,
        "kind": card.kind,
    }
    if card.ineligible is not None:
        detail["ineligible"] = card.ineligible
    return Abstention(card_id=card.id, anonymous_id=SLOW_PATH_ID, skip_reason=TO_REVIEW, detail=detail)


@dataclass
class CalculatorOutcome:
    """What Stage D decided for one card: each calculator's result, the rows to write, and the routing marker."""

    results: dict[str, Result] = field(default_factory=dict)
    votes: list[Vote] = field(default_factory=list)
    abstentions: list[Abstention] = field(default_factory=list)
    slow_path: Abstention | None = None

    def labels(self, registry: Sequence[Calculator] = CALCULATORS) -> dict[str, str]:
        """Outcome label per calculator id and the router, e.g. `{"stage-d-join-key-v2": "vote", ...}`."""
        labels = {calc.id: outcome_label(self.results.get(calc.id)) for calc in registry}
        labels[SLOW_PATH_ID] = TO_REVIEW if self.slow_path is not None else "not-routed"
        return labels


def _ineligible(card: CardRef, evidence: Evidence | None, registry: Sequence[Calculator]) -> CalculatorOutcome:
    """A card no machine may vote on: every calculator abstains with the work rule's reason, and the card goes to
    review with it (a card back, which shows no card, goes nowhere)."""
    reason = card.ineligible
    outcome = CalculatorOutcome()
    for calc in registry:
        outcome.results[calc.id] = Abstention(card_id=card.id, anonymous_id=calc.id, skip_reason=reason,
                                              detail={"ineligible": reason, "kind": card.kind})
    if reason != CARD_BACK:
        outcome.slow_path = route(card, outcome.results, evidence, registry)
    outcome.abstentions.extend(r for r in (*outcome.results.values(), outcome.slow_path) if r is not None)
    return outcome


def run_calculators(
    card: CardRef,
    evidence: Evidence | None,
    candidates: Sequence[PrintingRef],
    expansions: Mapping[str, ExpansionRef],
    registry: Sequence[Calculator] = CALCULATORS,
) -> CalculatorOutcome:
    """Run the registry's calculators in order (an `until-hit` one only while no confident hit exists yet), then
    the router. The calculators see only the candidates the card's kind may be voted onto (a token's token
    printings, a card's other printings); a card the work rule names ineligible gets no calculator at all."""
    if card.ineligible is not None:
        return _ineligible(card, evidence, registry)
    outcome = CalculatorOutcome()
    candidates = [p for p in candidates if printing_fits(card.kind, p.layout, p.set_type)]
    hit = False
    for calc in registry:
        if calc.runs == UNTIL_HIT and hit:
            outcome.results[calc.id] = None
            continue
        result = calc.decide(card, evidence, candidates, expansions)
        outcome.results[calc.id] = result
        hit = hit or calc.is_hit(result)
    outcome.slow_path = route(card, outcome.results, evidence, registry)
    for result in (*outcome.results.values(), outcome.slow_path):
        if isinstance(result, Vote):
            outcome.votes.append(result)
        elif isinstance(result, Abstention):
            outcome.abstentions.append(result)
    return outcome
