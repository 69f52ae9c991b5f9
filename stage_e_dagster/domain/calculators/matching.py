"""Matching primitives the Stage D calculators share: collector-number normalisation and set-symbol distances.

Kept apart from the calculators so that join-key and fallback judge numbers and symbols by the same rules.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from stage_e_dagster.domain.bits import hamming as hamming_distance
from stage_e_dagster.domain.catalog import ExpansionRef, PrintingRef
from stage_e_dagster.domain.evidence.parse import normalise_collector_number as normalise_collector_number
from stage_e_dagster.domain.printed_lines import layout_of

# Two set-symbol hashes at most this many bits apart show the same symbol.
SYMBOL_MAX_DISTANCE = 6
# The nearest symbol wins only when the runner-up is more than this many bits further away.
SYMBOL_MARGIN = 6


def normalise_set_code(code: str | None) -> str | None:
    """Lower-case, stripped set code, or None when missing or blank."""
    if code is None:
        return None
    text = code.strip().lower()
    return text or None


def symbol_distances(
    symbol_phash: int, set_codes: Iterable[str], expansions: Mapping[str, ExpansionRef]
) -> dict[str, int]:
    """Distance from a scanned set symbol to each listed set's reference symbol (sets without one are left out)."""
    distances: dict[str, int] = {}
    for code in set_codes:
        expansion = expansions.get(code)
        if expansion is not None and expansion.symbol_phash is not None and code not in distances:
            distances[code] = hamming_distance(symbol_phash, expansion.symbol_phash)
    return distances


@dataclass(frozen=True)
class SymbolPick:
    """The outcome of comparing a scanned symbol with candidate sets: the chosen set (or None) and why."""

    set_code: str | None
    distances: dict[str, int]
    reason: str


def pick_symbol_set(symbol_phash: int | None, set_codes: Iterable[str],
                    expansions: Mapping[str, ExpansionRef]) -> SymbolPick:
    """Choose the one set whose reference symbol the scan shows, or explain why none can be chosen.

    A set is chosen when its distance is at most `SYMBOL_MAX_DISTANCE` and every other listed set is more than
    `SYMBOL_MARGIN` bits further away. A listed set with no reference symbol cannot be ruled out, so its
    presence blocks a choice.
    """
    codes = list(dict.fromkeys(set_codes))
    if symbol_phash is None:
        return SymbolPick(None, {}, "no-symbol-hash")
    distances = symbol_distances(symbol_phash, codes, expansions)
    if len(distances) < len(codes):
        return SymbolPick(None, distances, "missing-reference-symbol")
    if len(codes) < 2:
        return SymbolPick(None, distances, "one-set-only")
    ranked = sorted(distances.items(), key=lambda item: item[1])
    (best_code, best), (_, runner_up) = ranked[0], ranked[1]
    if best > SYMBOL_MAX_DISTANCE:
        return SymbolPick(None, distances, "symbol-too-far")
    if runner_up - best <= SYMBOL_MARGIN:
        return SymbolPick(None, distances, "symbol-margin-too-small")
    return SymbolPick(best_code, distances, "symbol-match")


def with_symbol_twins(kept: Iterable[str], set_codes: Iterable[str],
                      expansions: Mapping[str, ExpansionRef]) -> set[str]:
    """`kept` and every listed set whose reference symbol is within `SYMBOL_MAX_DISTANCE` of a kept set's: two
    near-identical symbols cannot tell their sets apart, so a symbol reading that keeps one keeps both."""
    out = set(kept)
    references = {code: expansions[code].symbol_phash for code in set(set_codes)
                  if code in expansions and expansions[code].symbol_phash is not None}
    for code in list(out):
        mine = references.get(code)
        if mine is None:
            continue
        out |= {other for other, phash in references.items()
                if hamming_distance(mine, phash) <= SYMBOL_MAX_DISTANCE}  # type: ignore[arg-type]
    return out


def printed_total(printing: PrintingRef, expansions: Mapping[str, ExpansionRef]) -> int | None:
    """The total a printing's set prints after its numbers ("/274"), or None when the catalogue does not know it."""
    expansion = expansions.get(printing.set_code)
    return expansion.printed_total if expansion is not None else None


def printing_layout(printing: PrintingRef, expansions: Mapping[str, ExpansionRef]) -> str | None:
    """The collector-line layout a printing prints, from its frame and its set's release day."""
    expansion = expansions.get(printing.set_code)
    released = expansion.released_at if expansion is not None and expansion.released_at else printing.released_at
    return layout_of(printing.frame, released)


def candidate_ids(candidates: Iterable[PrintingRef]) -> list[int]:
    """Printing ids of candidates, for skip details."""
    return [printing.id for printing in candidates]
