"""Weighted consensus over a card's votes: decides its `printing_status` and `resolved_printing_id`.

Weights: a user vote 1, an admin vote 5, a machine (`ocr`) vote 0.5 with machine weight capped at 1.0 per
outcome. The heaviest outcome wins when its weight is at least 2 and its share of the total at least 0.6.
When humans disagree among themselves, machine weight is left out entirely. Machine votes count only from the
newest version of each calculator family present on the card (`voters.newest_per_family`): a version bump never
turns one calculator into two voters, even while an older version's votes are still stored.

Policies:
- `funnel` (default): the winning outcome must carry a human vote, so machine votes never resolve a card alone.
- `machine-quorum`: two distinct machine voters agreeing on an outcome resolve it, unless a human voted for a
  different outcome; otherwise the weighted rule above decides (without the human requirement).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from stage_e_dagster.domain.decisions import check_vote_shape
from stage_e_dagster.domain.voters import newest_per_family

NO_MATCH = "no_match"
Outcome = int | str  # a printing id, or NO_MATCH

POLICIES = ("funnel", "machine-quorum")
MACHINE_SOURCE = "ocr"
SOURCE_WEIGHTS = {"user": 1.0, "admin": 5.0, MACHINE_SOURCE: 0.5}
MACHINE_CAP_PER_OUTCOME = 1.0
MIN_WEIGHT = 2.0
MIN_SHARE = 0.6
_EPSILON = 1e-9


@dataclass(frozen=True)
class CastVote:
    """One stored vote as consensus sees it (a `card_printing_tag` row)."""

    printing_id: int | None
    is_no_match: bool
    source: str  # "ocr" (machine), "user" or "admin"
    anonymous_id: str

    def __post_init__(self) -> None:
        check_vote_shape(self.printing_id, self.is_no_match)
        if self.source not in SOURCE_WEIGHTS:
            raise ValueError(f"unknown vote source {self.source!r}; expected one of {sorted(SOURCE_WEIGHTS)}")

    @property
    def outcome(self) -> Outcome:
        """The printing id voted for, or NO_MATCH."""
        return NO_MATCH if self.printing_id is None else self.printing_id

    @property
    def is_human(self) -> bool:
        """True for user and admin votes."""
        return self.source != MACHINE_SOURCE


@dataclass(frozen=True)
class Resolution:
    """The consensus for one card, with the weights that explain it."""

    printing_status: str  # "unresolved" | "resolved" | "no_match"
    resolved_printing_id: int | None
    weights: dict[Outcome, float] = field(default_factory=dict)
    winner: Outcome | None = None
    reason: str = ""
    policy: str = "funnel"


def _decided(winner: Outcome, weights: dict[Outcome, float], reason: str, policy: str) -> Resolution:
    if winner == NO_MATCH:
        return Resolution("no_match", None, weights, winner, reason, policy)
    assert isinstance(winner, int)
    return Resolution("resolved", winner, weights, winner, reason, policy)


def _quorum_outcome(votes: Sequence[CastVote], human_outcomes: set[Outcome]) -> Outcome | None:
    """The one outcome two or more distinct machine voters agree on and no human contradicts, if any."""
    voters: dict[Outcome, set[str]] = defaultdict(set)
    for vote in votes:
        if not vote.is_human:
            voters[vote.outcome].add(vote.anonymous_id)
    agreed = [outcome for outcome, ids in voters.items() if len(ids) >= 2]
    if len(agreed) != 1:
        return None
    if human_outcomes - {agreed[0]}:
        return None
    return agreed[0]


def counted(votes: Sequence[CastVote]) -> list[CastVote]:
    """The votes consensus counts: each distinct vote once, machine votes only from the newest version of their
    calculator family on the card."""
    unique = list(dict.fromkeys(votes))  # a voter's repeated identical vote counts once
    machines = newest_per_family(vote.anonymous_id for vote in unique if not vote.is_human)
    return [vote for vote in unique if vote.is_human or vote.anonymous_id in machines]


def resolve(votes: Sequence[CastVote], policy: str = "funnel") -> Resolution:
    """Decide a card's consensus from its votes under `policy` ("funnel" or "machine-quorum")."""
    if policy not in POLICIES:
        raise ValueError(f"unknown consensus policy {policy!r}; expected one of {', '.join(POLICIES)}")
    unique = counted(votes)
    human_outcomes = {vote.outcome for vote in unique if vote.is_human}
    humans_conflict = len(human_outcomes) > 1

    human: dict[Outcome, float] = defaultdict(float)
    machine: dict[Outcome, float] = defaultdict(float)
    for vote in unique:
        (human if vote.is_human else machine)[vote.outcome] += SOURCE_WEIGHTS[vote.source]
    weights: dict[Outcome, float] = {}
    for outcome in dict.fromkeys([*human, *machine]):
        machine_weight = 0.0 if humans_conflict else min(machine.get(outcome, 0.0), MACHINE_CAP_PER_OUTCOME)
        weight = human.get(outcome, 0.0) + machine_weight
        if weight > 0:
            weights[outcome] = weight

    if policy == "machine-quorum":
        agreed = _quorum_outcome(unique, human_outcomes)
        if agreed is not None:
            return _decided(agreed, weights, "machine-quorum", policy)
    if not weights:
        return Resolution("unresolved", None, weights, None, "no-votes", policy)

    winner = max(weights, key=lambda outcome: weights[outcome])
    top = weights[winner]
    share = top / sum(weights.values())
    if top + _EPSILON < MIN_WEIGHT:
        return Resolution("unresolved", None, weights, None, "weight-below-minimum", policy)
    if share + _EPSILON < MIN_SHARE:
        return Resolution("unresolved", None, weights, None, "share-below-minimum", policy)
    if policy == "funnel" and winner not in human_outcomes:
        return Resolution("unresolved", None, weights, None, "no-human-vote", policy)
    return _decided(winner, weights, "weighted", policy)
