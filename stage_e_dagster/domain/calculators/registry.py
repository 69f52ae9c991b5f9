"""The Stage D calculators, declared once, in the order they run.

Each line says what a calculator is: its voter id (`<family>-v<N>`), its decide function, whether it runs always or
only while no earlier calculator has a confident hit, whether its votes are machine votes, and from what confidence
a printing vote of it counts as a confident machine hit (which keeps a card out of human review). The Stage D
runner, the review queue's SQL, the `decided_by` mark and the outcome labels are all derived from this list, so
adding a calculator is one module with a decide function plus one line here. Bumping a calculator's version keeps
its family: the new version's decision on a card retires the older versions' votes there (`domain/voters.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from stage_e_dagster.domain.calculators.era import ERA_ID, decide_era
from stage_e_dagster.domain.calculators.fallback import FALLBACK_ID, decide_fallback
from stage_e_dagster.domain.calculators.join_key import JOIN_KEY_ID, decide_join_key
from stage_e_dagster.domain.catalog import CardRef, ExpansionRef, PrintingRef
from stage_e_dagster.domain.decisions import Abstention, Vote
from stage_e_dagster.domain.evidence.model import Evidence
from stage_e_dagster.domain.voters import split_voter_id

Result = Vote | Abstention | None
Decide = Callable[[CardRef, Evidence | None, Sequence[PrintingRef], Mapping[str, ExpansionRef]], Vote | Abstention]

ALWAYS = "always"
UNTIL_HIT = "until-hit"
"""Run only while no earlier calculator has a confident hit (a second opinion, not a confirmation)."""
MACHINE_PREFIX = "stage-d-"
"""Every machine voter id starts with it; human voter names may not."""

_EPSILON = 1e-9


@dataclass(frozen=True)
class Calculator:
    """One Stage D calculator and its routing rule."""

    id: str
    decide: Decide
    runs: str = ALWAYS
    machine_voter: bool = True
    hit_confidence: float | None = 0.0
    """A printing vote with at least this confidence is a confident machine hit; None: never a hit."""

    def __post_init__(self) -> None:
        split_voter_id(self.id)
        if not self.id.startswith(MACHINE_PREFIX):
            raise ValueError(f"calculator id {self.id!r} must start with {MACHINE_PREFIX!r}")
        if self.runs not in (ALWAYS, UNTIL_HIT):
            raise ValueError(f"calculator {self.id}: runs must be {ALWAYS!r} or {UNTIL_HIT!r}")

    @property
    def family(self) -> str:
        return split_voter_id(self.id)[0]

    @property
    def version(self) -> int:
        return split_voter_id(self.id)[1]

    @property
    def label(self) -> str:
        """Short name for reasons and details, e.g. `join-key`."""
        return self.family.removeprefix(MACHINE_PREFIX)

    def is_hit(self, result: Result) -> bool:
        """True when `result` is this calculator's printing vote at or above its hit confidence."""
        return (
            self.hit_confidence is not None
            and isinstance(result, Vote)
            and result.anonymous_id == self.id
            and not result.is_no_match
            and result.confidence >= self.hit_confidence - _EPSILON
        )


CONFIDENT_JOIN_KEY = 0.8
"""A join-key vote from a set code and number read and matched. Weaker join-key votes (number only, a contradicting
file-name hint) still get the fallback's independent second opinion, which is what lets two machine voters agree
under the machine-quorum policy."""

CALCULATORS: tuple[Calculator, ...] = (
    Calculator(JOIN_KEY_ID, decide_join_key, hit_confidence=CONFIDENT_JOIN_KEY),
    Calculator(ERA_ID, decide_era, runs=UNTIL_HIT),
    Calculator(FALLBACK_ID, decide_fallback, runs=UNTIL_HIT),
)
"""The era calculator runs before the fallback: on a card printed before collector numbers it weighs the copyright
year besides border and symbol, where the fallback would decide on border, symbol and file-name hint alone."""


def machine_voters(registry: Sequence[Calculator] = CALCULATORS) -> tuple[str, ...]:
    """Ids of the calculators whose votes are machine votes, in order."""
    return tuple(c.id for c in registry if c.machine_voter)


def is_confident_hit(result: Result, registry: Sequence[Calculator] = CALCULATORS) -> bool:
    """True when `result` is a confident machine hit by the rule of the calculator that cast it."""
    return any(c.is_hit(result) for c in registry)
