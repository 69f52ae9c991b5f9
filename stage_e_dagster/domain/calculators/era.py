"""The era calculator: identify a card printed before collector numbers existed from what its face still says.

Cards printed before mid-1998 carry no collector number, so the join key has nothing to match. What tells their
printings apart is the name, the set symbol, the frame, the border colour and the copyright year on the bottom
line ("© 1995"). The calculator applies only to a scan with a copyright year from that era and no collector number
read (or one that no printing of the name has: a speck of the frame read as a digit); its candidates are the name's
printings released before numbers were printed, in an old frame. Each check either has no reading or keeps the
candidates it cannot rule out:

- year: the printing's set came out in the copyright year or the year after;
- border: the printing's border colour is the scan's (an ambiguous band claims nothing);
- symbol: the printing's set symbol is the scan's; a set whose reference symbol is near-identical to a kept one's
  is kept with it (`with_symbol_twins`), so near-identical symbols never decide alone.

One survivor gets a vote; several are routed to review with the short list (`candidate_ids`) in the abstention's
detail, which the router carries into the scan log. There is no reference art to compare.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import date
from typing import Any

from stage_e_dagster.domain.calculators.fallback import printings_showing_symbol
from stage_e_dagster.domain.calculators.matching import (
    candidate_ids,
    normalise_collector_number,
)
from stage_e_dagster.domain.catalog import CardRef, ExpansionRef, PrintingRef
from stage_e_dagster.domain.decisions import Abstention, Vote
from stage_e_dagster.domain.evidence.model import AMBIGUOUS_BORDER, Evidence

ERA_ID = "stage-d-era-v1"

NUMBERED_FROM = date(1998, 6, 1)
"""Printings released from this day on print a collector number (Exodus, June 1998, was the first set)."""
OLD_FRAMES = ("1993", "1997")
"""Scryfall's frames of the cards printed before collector numbers."""
MAX_YEARS_AFTER_COPYRIGHT = 1
"""A set released late in a year, or reprinted early the next, still carries the earlier copyright year."""
CONFIDENCE_ERA = 0.75
CONFIDENCE_ERA_SINGLE = 0.7
"""One survivor kept by two or more checks with a reading, or by the year alone."""

Check = Callable[[Evidence, Sequence[PrintingRef], Mapping[str, ExpansionRef]], set[int] | None]


def _released(printing: PrintingRef, expansions: Mapping[str, ExpansionRef]) -> date | None:
    expansion = expansions.get(printing.set_code)
    if expansion is not None and expansion.released_at is not None:
        return expansion.released_at
    return printing.released_at


def numberless(printing: PrintingRef, expansions: Mapping[str, ExpansionRef]) -> bool:
    """Whether a printing was printed without a collector number: released before `NUMBERED_FROM`, in an old
    frame (an unknown date or frame does not rule it out)."""
    released = _released(printing, expansions)
    return (released is None or released < NUMBERED_FROM) and (printing.frame in (None, *OLD_FRAMES))


def year_check(evidence: Evidence, candidates: Sequence[PrintingRef],
               expansions: Mapping[str, ExpansionRef]) -> set[int] | None:
    """Keep printings released in the copyright year or up to `MAX_YEARS_AFTER_COPYRIGHT` after it."""
    year = evidence.copyright_year
    if year is None:
        return None
    kept = set()
    for printing in candidates:
        released = _released(printing, expansions)
        if released is None or 0 <= released.year - year <= MAX_YEARS_AFTER_COPYRIGHT:
            kept.add(printing.id)
    return kept


def border_check(evidence: Evidence, candidates: Sequence[PrintingRef],
                 expansions: Mapping[str, ExpansionRef]) -> set[int] | None:
    """Keep printings whose border colour is the scan's; no reading from an ambiguous band or unknown borders."""
    if evidence.border_color in (None, AMBIGUOUS_BORDER) or all(p.border_color is None for p in candidates):
        return None
    seen = evidence.border_color.lower()
    return {p.id for p in candidates if p.border_color is None or p.border_color.lower() == seen}


def symbol_check(evidence: Evidence, candidates: Sequence[PrintingRef],
                 expansions: Mapping[str, ExpansionRef]) -> set[int] | None:
    """Keep printings whose set symbol the scan shows, with their sets' near-identical twins and sets without a
    reference symbol (the fallback's symbol rule, `printings_showing_symbol`)."""
    return printings_showing_symbol(evidence, candidates, expansions)


CHECKS: dict[str, Check] = {"year": year_check, "border": border_check, "symbol": symbol_check}


def _skip(card: CardRef, reason: str, **detail: Any) -> Abstention:
    return Abstention(card_id=card.id, anonymous_id=ERA_ID, skip_reason=reason, detail=detail)


def decide_era(card: CardRef, evidence: Evidence | None, candidates: Sequence[PrintingRef],
               expansions: Mapping[str, ExpansionRef]) -> Vote | Abstention:
    """Vote for the one pre-1998 printing of the name every check with a reading keeps, or abstain naming the
    survivors (`ambiguous`), or why the calculator does not apply."""
    if evidence is None:
        return _skip(card, "no-evidence", rescannable=True)
    if evidence.truncated:
        return _skip(card, "truncated-image")
    number = normalise_collector_number(evidence.collector_number)
    if number and any(normalise_collector_number(p.collector_number) == number for p in candidates):
        return _skip(card, "numbered")
    year = evidence.copyright_year
    if year is None or year >= NUMBERED_FROM.year + 1:
        return _skip(card, "not-numberless-era", copyright_year=year)
    old = [p for p in candidates if numberless(p, expansions)]
    if not old:
        return _skip(card, "no-numberless-printing", name=card.name, copyright_year=year,
                     candidate_ids=candidate_ids(candidates))
    readings = {name: kept for name, check in CHECKS.items() if (kept := check(evidence, old, expansions)) is not None}
    survivors = [p.id for p in old if all(p.id in kept for kept in readings.values())]
    detail: dict[str, Any] = {
        "copyright_year": year,
        "border_color": evidence.border_color,
        "candidate_ids": survivors,
        "numberless_ids": candidate_ids(old),
        "checks": {name: sorted(kept) for name, kept in readings.items()},
    }
    if len(survivors) == 1:
        confidence = CONFIDENCE_ERA if len(readings) >= 2 else CONFIDENCE_ERA_SINGLE
        return Vote(card_id=card.id, anonymous_id=ERA_ID, printing_id=survivors[0], confidence=confidence)
    return _skip(card, "ambiguous" if survivors else "eliminated", **detail)
