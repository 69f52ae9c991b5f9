"""Stage D for a batch as pure data: run the calculators per card and turn their outcomes into rows to write.

Rule: a machine voter's stored votes on a card always equal its latest conclusion on that card. Every processed
card therefore yields one `VoteGroup` per machine voter (join-key, fallback); the group is empty when the voter
abstained or did not run, which withdraws whatever it said in an earlier pass. So a card whose join-key now has a
confident hit loses its stale fallback vote, and a voter that now abstains on new evidence no longer votes on the
old evidence's say-so.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from stage_e_dagster.domain.calculators import (
    CALCULATORS,
    SLOW_PATH_ID,
    TO_REVIEW,
    Calculator,
    evidence_version_key,
    machine_voters,
    run_calculators,
)
from stage_e_dagster.domain.catalog import CardRef, ExpansionRef, PrintingRef
from stage_e_dagster.domain.decisions import Abstention, Vote, check_vote_shape
from stage_e_dagster.domain.evidence.model import Evidence

# Outcome labels that are not skips: a vote, a no-match vote, a calculator that did not run, a card not routed.
NOT_SKIPS = frozenset({"vote", "no-match", "not-run", "not-routed"})
OutcomeKey = tuple[int | None, bool, str]  # (printing id, is no-match, source)


@dataclass(frozen=True)
class ProposedVote:
    """One vote row a voter wants stored for a card."""

    printing_id: int | None
    is_no_match: bool = False
    source: str = "ocr"
    confidence: float | None = None
    applied_from_card_id: int | None = None
    """For a human vote applied to a copy of the card voted on: that card (provenance, not part of the value)."""

    def __post_init__(self) -> None:
        check_vote_shape(self.printing_id, self.is_no_match)

    @property
    def key(self) -> OutcomeKey:
        """What the vote says (confidence aside): stored votes equal to it need no write."""
        return (self.printing_id, self.is_no_match, self.source)


@dataclass(frozen=True)
class VoteGroup:
    """Everything one voter says about one card. Empty `votes` withdraws whatever the voter said before."""

    card_id: int
    anonymous_id: str
    votes: tuple[ProposedVote, ...] = ()

    def outcome_set(self) -> frozenset[OutcomeKey]:
        """The group's value, compared with the stored rows by the value-aware split."""
        return frozenset(vote.key for vote in self.votes)


@dataclass(frozen=True)
class LogEntry:
    """A `card_scan_log` row to append: an abstention, or a `to-review` routing marker."""

    card_id: int
    anonymous_id: str
    skip_reason: str
    evidence_key: str
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def is_review_marker(self) -> bool:
        return self.skip_reason == TO_REVIEW


@dataclass
class StageDPlan:
    """What Stage D wants written for a batch, with each calculator's outcome counts."""

    groups: list[VoteGroup] = field(default_factory=list)
    log_entries: list[LogEntry] = field(default_factory=list)
    outcomes: dict[str, Counter[str]] = field(default_factory=dict)
    routed: list[int] = field(default_factory=list)
    ineligible: Counter[str] = field(default_factory=Counter)
    """Cards no machine may vote on, by the work rule's reason (`domain.kinds.REASONS`)."""

    @classmethod
    def empty(cls, registry: Sequence[Calculator] = CALCULATORS) -> StageDPlan:
        """A plan with a zero count for every calculator of `registry` and the router."""
        return cls(outcomes={name: Counter() for name in outcome_names(registry)})

    def skips(self) -> dict[str, dict[str, int]]:
        """Skip reasons per calculator (votes, no-match votes and calculators that did not run left out)."""
        return {
            calc: {label: n for label, n in sorted(counts.items()) if label not in NOT_SKIPS}
            for calc, counts in self.outcomes.items()
        }


def proposed(vote: Vote) -> ProposedVote:
    """A calculator's `Vote` as a row to store."""
    return ProposedVote(vote.printing_id, vote.is_no_match, vote.source, vote.confidence)


def outcome_names(registry: Sequence[Calculator] = CALCULATORS) -> tuple[str, ...]:
    """Whose outcomes Stage D counts: every calculator, then the router."""
    return (*(calc.id for calc in registry), SLOW_PATH_ID)


def machine_groups(card_id: int, votes: Sequence[Vote],
                   registry: Sequence[Calculator] = CALCULATORS) -> list[VoteGroup]:
    """One group per machine voter for a processed card; empty for a voter that cast nothing this pass."""
    return [
        VoteGroup(card_id, voter, tuple(proposed(v) for v in votes if v.anonymous_id == voter))
        for voter in machine_voters(registry)
    ]


def log_entry(abstention: Abstention, evidence: Evidence | None) -> LogEntry:
    """An abstention as a scan-log row keyed by the evidence version it was decided on."""
    return LogEntry(abstention.card_id, abstention.anonymous_id, abstention.skip_reason,
                    evidence_version_key(evidence), dict(abstention.detail))


def plan_batch(
    cards: Sequence[CardRef],
    evidence: Mapping[int, Evidence | None],
    candidates: Mapping[int, Sequence[PrintingRef]],
    expansions: Mapping[str, ExpansionRef],
    registry: Sequence[Calculator] = CALCULATORS,
) -> StageDPlan:
    """Run the calculators for each card and collect the vote groups, scan-log rows and outcome counts."""
    plan = StageDPlan.empty(registry)
    for card in cards:
        card_evidence = evidence.get(card.id)
        outcome = run_calculators(card, card_evidence, candidates.get(card.id, ()), expansions, registry)
        plan.groups.extend(machine_groups(card.id, outcome.votes, registry))
        plan.log_entries.extend(log_entry(a, card_evidence) for a in outcome.abstentions)
        for calc, label in outcome.labels(registry).items():
            plan.outcomes[calc][label] += 1
        if outcome.slow_path is not None:
            plan.routed.append(card.id)
        if card.ineligible is not None:
            plan.ineligible[card.ineligible] += 1
    return plan
