"""What the review page shows for one card, and the order a reviewer's number keys pick candidates in.

Pure values: `db.review.page` fills them from Postgres, the web app renders them. The candidate order puts the
machine's picks first (most confident first), so `1` always confirms the machine's best pick, then the printings
the scan's own evidence points at (its set code, the filename's set hint, the nearest set symbol), then the rest,
newest set first.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from typing import Any

from stage_e_dagster.domain.calculators.matching import hamming_distance

KEYED_CANDIDATES = 9
"""Keys `1`-`9` pick the first nine candidates."""


@dataclass(frozen=True)
class MachinePick:
    """One machine vote on the card: which calculator, for which printing (None: no match), how confident."""

    voter: str
    label: str
    printing_id: int | None
    confidence: float | None


@dataclass(frozen=True)
class HumanVote:
    """One person's stored vote on the card."""

    voter: str
    source: str  # "user" | "admin"
    printing_id: int | None


@dataclass(frozen=True)
class Candidate:
    """A printing of the card's name, with its set, and how the machines and the scan relate to it."""

    printing_id: int
    scryfall_id: str
    set_code: str
    collector_number: str
    set_name: str | None
    released_at: date | None
    has_reference_symbol: bool
    symbol_distance: int | None = None
    """Hamming distance (0-64) between the scan's set-symbol hash and the set's reference hash, when both exist."""
    machine_confidence: float | None = None
    machine_voters: tuple[str, ...] = ()
    key: str | None = None

    @property
    def year(self) -> int | None:
        return self.released_at.year if self.released_at else None


@dataclass(frozen=True)
class CardView:
    """Everything the page shows for one card.

    `version` names what the reviewer saw (the card's bytes, its machine votes, its review marker): a vote sent
    with another version is refused as stale. `queue_state` is `awaiting` while the card needs a person, else why
    not (`resolved`, `no_match`, `missing`, `pending`: Stage C or D has not finished with its current bytes).
    """

    card_id: int
    identifier: str
    name: str
    expansion_hint: str | None
    source_key: str
    printing_status: str
    resolved_printing_id: int | None
    queue_state: str
    version: str
    routed: bool
    evidence: dict[str, Any] | None
    stage_c_skip: str | None
    why: list[str] = field(default_factory=list)
    ineligible: str | None = None
    """Why no machine may vote on the card (`domain.kinds.REASONS`), when the work rule names a reason."""
    kind: str = "card"
    calculator_detail: dict[str, Any] = field(default_factory=dict)
    machine_picks: list[MachinePick] = field(default_factory=list)
    human_votes: list[HumanVote] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)
    consensus_reason: str = ""
    printing_labels: dict[int, str] = field(default_factory=dict)
    """`SET #number` of every printing the page mentions (candidates, votes, the resolved printing)."""
    copies: int = 1
    """Cards with these exact bytes (this one included); a vote here is stored on every one of them."""

    @property
    def awaiting(self) -> bool:
        return self.queue_state == "awaiting"

    def candidate(self, printing_id: int | None) -> Candidate | None:
        return next((c for c in self.candidates if c.printing_id == printing_id), None)

    def label(self, printing_id: int | None) -> str:
        """`SET #number` of a printing, `no match` for None."""
        if printing_id is None:
            return "no match"
        return self.printing_labels.get(printing_id, f"printing {printing_id}")


def symbol_distance(scan_hash: int | None, reference_hash: int | None) -> int | None:
    """Hamming distance between two 64-bit hashes, None when either is missing."""
    if scan_hash is None or reference_hash is None:
        return None
    return hamming_distance(scan_hash, reference_hash)


def order_candidates(
    candidates: Iterable[Candidate],
    picks: Sequence[MachinePick],
    *,
    read_set_code: str | None = None,
    hint: str | None = None,
) -> list[Candidate]:
    """Candidates with their machine confidence filled in, in key order, the first nine keyed `1`-`9`."""
    best: dict[int, float] = {}
    voters: dict[int, list[str]] = {}
    for pick in picks:
        if pick.printing_id is None:
            continue
        best[pick.printing_id] = max(best.get(pick.printing_id, 0.0), pick.confidence or 0.0)
        voters.setdefault(pick.printing_id, []).append(pick.label)
    pointed = {code.lower() for code in (read_set_code, hint) if code}

    def rank(c: Candidate) -> tuple[Any, ...]:
        machine = best.get(c.printing_id)
        return (
            machine is None, -(machine or 0.0),
            c.set_code.lower() not in pointed,
            c.symbol_distance if c.symbol_distance is not None else 65,
            -(c.released_at or date.min).toordinal(), c.set_code, c.collector_number,
        )

    ordered = sorted(candidates, key=rank)
    return [
        replace(c, machine_confidence=best.get(c.printing_id), machine_voters=tuple(voters.get(c.printing_id, ())),
                key=str(index + 1) if index < KEYED_CANDIDATES else None)
        for index, c in enumerate(ordered)
    ]


def printing_labels(candidates: Iterable[Candidate], extra: Mapping[int, str] | None = None) -> dict[int, str]:
    """`SET #number` per printing id of the candidates, plus `extra` labels for printings outside them."""
    labels = dict(extra or {})
    labels.update({c.printing_id: f"{c.set_code.upper()} #{c.collector_number}" for c in candidates})
    return labels
