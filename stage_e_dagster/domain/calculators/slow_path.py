"""The slow-path router and the Stage D pipeline for one card: join-key, then fallback, then routing to review.

Every card without a confident machine hit is marked `to-review` with what a reviewer needs to act on it. The
marker carries the evidence version key, so the persistence layer records a card once per evidence version.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from stage_e_dagster.domain.calculators.fallback import FALLBACK_ID, decide_fallback, is_confident_hit
from stage_e_dagster.domain.calculators.join_key import JOIN_KEY_ID, decide_join_key
from stage_e_dagster.domain.calculators.matching import normalise_collector_number
from stage_e_dagster.domain.catalog import CardRef, ExpansionRef, PrintingRef
from stage_e_dagster.domain.decisions import Abstention, Vote
from stage_e_dagster.domain.evidence.model import Evidence

SLOW_PATH_ID = "stage-d-slow-path-v1"
TO_REVIEW = "to-review"
NO_EVIDENCE_VERSION = "no-evidence"

Result = Vote | Abstention | None


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


def is_machine_hit(join_key_result: Result, fallback_result: Result) -> bool:
    """True when join-key voted for a printing or fallback did: the card has a machine suggestion."""
    if is_confident_hit(join_key_result):
        return True
    return isinstance(fallback_result, Vote) and not fallback_result.is_no_match


def route(card: CardRef, join_key_result: Result, fallback_result: Result,
          evidence: Evidence | None) -> Abstention | None:
    """Mark a card without a confident machine hit `to-review`, explaining why; None when it has a hit."""
    if is_machine_hit(join_key_result, fallback_result):
        return None
    detail = {
        "why": [f"join-key:{outcome_label(join_key_result)}", f"fallback:{outcome_label(fallback_result)}"],
        "join_key": describe(join_key_result),
        "fallback": describe(fallback_result),
        "evidence": evidence_summary(evidence),
        "evidence_version": evidence_version_key(evidence),
        "name": card.name,
        "expansion_hint": card.expansion_hint,
    }
    return Abstention(card_id=card.id, anonymous_id=SLOW_PATH_ID, skip_reason=TO_REVIEW, detail=detail)


@dataclass
class CalculatorOutcome:
    """What Stage D decided for one card: the rows to write and each calculator's result for counters."""

    votes: list[Vote] = field(default_factory=list)
    abstentions: list[Abstention] = field(default_factory=list)
    join_key: Result = None
    fallback: Result = None
    slow_path: Abstention | None = None

    def labels(self) -> dict[str, str]:
        """Outcome label per calculator id, e.g. `{"stage-d-join-key-v1": "vote", ...}`."""
        routed = TO_REVIEW if self.slow_path is not None else "not-routed"
        return {JOIN_KEY_ID: outcome_label(self.join_key), FALLBACK_ID: outcome_label(self.fallback),
                SLOW_PATH_ID: routed}


def run_calculators(
    card: CardRef,
    evidence: Evidence | None,
    candidates: Sequence[PrintingRef],
    expansions: Mapping[str, ExpansionRef],
) -> CalculatorOutcome:
    """Run join-key, fallback (only without a confident join-key hit) and the router for one card."""
    outcome = CalculatorOutcome(join_key=decide_join_key(card, evidence, candidates, expansions))
    if not is_confident_hit(outcome.join_key):
        outcome.fallback = decide_fallback(card, evidence, candidates, expansions)
    outcome.slow_path = route(card, outcome.join_key, outcome.fallback, evidence)
    for result in (outcome.join_key, outcome.fallback, outcome.slow_path):
        if isinstance(result, Vote):
            outcome.votes.append(result)
        elif isinstance(result, Abstention):
            outcome.abstentions.append(result)
    return outcome
