"""The fallback calculator: narrow a card's candidate printings by independent sub-checks and vote on a survivor.

Runs only where the join-key calculator has no confident hit. Each sub-check (border colour, set symbol,
filename expansion hint, the layout of the collector line: where on the card a number was read, never which; the
printed total read with it, which names a set's size, never a printing) either has no reading or keeps the
candidates it cannot rule out; the survivors are the intersection of the sub-checks that had a reading. It never
casts a no-match vote: ruling every printing out only says the sub-checks disagree, not that the card is absent
from the catalogue.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from stage_e_dagster.domain.calculators.matching import (
    SYMBOL_MARGIN,
    SYMBOL_MAX_DISTANCE,
    candidate_ids,
    normalise_set_code,
    printed_total,
    printing_layout,
    symbol_distances,
    with_symbol_twins,
)
from stage_e_dagster.domain.catalog import CardRef, ExpansionRef, PrintingRef
from stage_e_dagster.domain.decisions import Abstention, Vote
from stage_e_dagster.domain.evidence.model import AMBIGUOUS_BORDER, Evidence
from stage_e_dagster.domain.printed_lines import fits

FALLBACK_ID = "stage-d-fallback-v2"

# One survivor confirmed by two or more sub-checks with a reading, or by a single one.
CONFIDENCE_MULTI_CHECK = 0.8
CONFIDENCE_SINGLE_CHECK = 0.7
# When no set symbol is within SYMBOL_MAX_DISTANCE, the nearest one is still kept if it is at most this far
# away and beats the runner-up by more than SYMBOL_MARGIN (a noisy crop of a recognisable symbol).
SYMBOL_NEAREST_CEILING = 12

SubCheck = Callable[[CardRef, Evidence, Sequence[PrintingRef], Mapping[str, ExpansionRef]], set[int] | None]


def border_check(
    card: CardRef, evidence: Evidence, candidates: Sequence[PrintingRef], expansions: Mapping[str, ExpansionRef]
) -> set[int] | None:
    """Keep printings whose border colour matches the scan's (or is unknown). No reading without both sides, and
    none from an ambiguous band (it claims nothing, so it rules nothing out)."""
    if evidence.border_color in (None, AMBIGUOUS_BORDER) or all(p.border_color is None for p in candidates):
        return None
    seen = evidence.border_color.lower()
    return {p.id for p in candidates if p.border_color is None or p.border_color.lower() == seen}


def symbol_check(
    card: CardRef, evidence: Evidence, candidates: Sequence[PrintingRef], expansions: Mapping[str, ExpansionRef]
) -> set[int] | None:
    """Keep printings whose set symbol the scan shows (`printings_showing_symbol`)."""
    return printings_showing_symbol(evidence, candidates, expansions)


def printings_showing_symbol(evidence: Evidence, candidates: Sequence[PrintingRef],
                             expansions: Mapping[str, ExpansionRef]) -> set[int] | None:
    """Keep printings whose set symbol the scan shows; printings of sets with no reference symbol stay in.

    Kept sets: those within SYMBOL_MAX_DISTANCE; if there are none, the uniquely nearest set when it is within
    SYMBOL_NEAREST_CEILING and more than SYMBOL_MARGIN closer than the runner-up; and with any kept set, every
    set whose reference symbol is near-identical to its (`with_symbol_twins`). No reading without a scanned
    symbol hash or without any reference symbol among the candidates' sets.
    """
    if evidence.symbol_phash is None:
        return None
    distances = symbol_distances(evidence.symbol_phash, (p.set_code for p in candidates), expansions)
    if not distances:
        return None
    kept = {code for code, distance in distances.items() if distance <= SYMBOL_MAX_DISTANCE}
    if not kept:
        ranked = sorted(distances.values())
        best_code = min(distances, key=lambda code: distances[code])
        clear = len(ranked) == 1 or ranked[1] - ranked[0] > SYMBOL_MARGIN
        if ranked[0] <= SYMBOL_NEAREST_CEILING and clear:
            kept = {best_code}
    kept = with_symbol_twins(kept, distances, expansions)
    return {p.id for p in candidates if p.set_code in kept or p.set_code not in distances}


def hint_check(
    card: CardRef, evidence: Evidence, candidates: Sequence[PrintingRef], expansions: Mapping[str, ExpansionRef]
) -> set[int] | None:
    """Keep printings of the set the filename names. No reading when the hint is missing or not a known set."""
    hint = normalise_set_code(card.expansion_hint)
    if hint is None or hint not in expansions:
        return None
    return {p.id for p in candidates if p.set_code == hint}


def layout_check(
    card: CardRef, evidence: Evidence, candidates: Sequence[PrintingRef], expansions: Mapping[str, ExpansionRef]
) -> set[int] | None:
    """Keep printings whose frame prints its number where the scan shows one (`printed_lines.fits`: a centred
    legal line is no modern frame's). No reading when no number was read."""
    if evidence.collector_layout is None:
        return None
    return {p.id for p in candidates if fits(evidence.collector_layout, printing_layout(p, expansions))}


def total_check(
    card: CardRef, evidence: Evidence, candidates: Sequence[PrintingRef], expansions: Mapping[str, ExpansionRef]
) -> set[int] | None:
    """Keep printings whose set prints the total read ("105/126": a set of 126), and those of sets whose total is
    unknown. A set symbol nearer another set's reference than the card's own cannot then outvote the line the card
    prints. No reading without a total, or when no candidate's set prints it: a misread total rules nothing out."""
    total = evidence.collector_total
    if total is None:
        return None
    totals = {p.id: printed_total(p, expansions) for p in candidates}
    if total not in totals.values():
        return None
    return {printing for printing, printed in totals.items() if printed in (None, total)}


SUB_CHECKS: dict[str, SubCheck] = {"border": border_check, "symbol": symbol_check, "hint": hint_check,
                                   "layout": layout_check, "total": total_check}


def _skip(card: CardRef, reason: str, **detail: Any) -> Abstention:
    return Abstention(card_id=card.id, anonymous_id=FALLBACK_ID, skip_reason=reason, detail=detail)


def decide_fallback(
    card: CardRef,
    evidence: Evidence | None,
    candidates: Sequence[PrintingRef],
    expansions: Mapping[str, ExpansionRef],
) -> Vote | Abstention:
    """Vote for the one candidate every sub-check with a reading keeps, or abstain naming the survivors.

    Evidence from a truncated image is not trusted for pixel checks, so such a card abstains outright.
    """
    if evidence is None:
        return _skip(card, "no-evidence", rescannable=True)
    if evidence.truncated:
        return _skip(card, "truncated-image")
    if not candidates:
        return _skip(card, "no-candidates", name=card.name)

    readings: dict[str, set[int]] = {}
    for name, check in SUB_CHECKS.items():
        kept = check(card, evidence, candidates, expansions)
        if kept is not None:
            readings[name] = kept
    if not readings:
        return _skip(card, "no-sub-check-evidence", candidate_ids=candidate_ids(candidates))

    survivors = [p.id for p in candidates if all(p.id in kept for kept in readings.values())]
    detail: dict[str, Any] = {
        "survivor_ids": survivors,
        "sub_checks": {name: sorted(kept) for name, kept in readings.items()},
        "candidate_ids": candidate_ids(candidates),
    }
    if len(survivors) == 1:
        confidence = CONFIDENCE_MULTI_CHECK if len(readings) >= 2 else CONFIDENCE_SINGLE_CHECK
        return Vote(card_id=card.id, anonymous_id=FALLBACK_ID, printing_id=survivors[0], confidence=confidence)
    return _skip(card, "eliminated" if not survivors else "ambiguous", **detail)
