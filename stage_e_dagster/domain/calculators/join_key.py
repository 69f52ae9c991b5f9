"""The join-key calculator: identify a scan's printing from the collector line it prints (set code + number).

The first and most trusted Stage D calculator. It reads only the stored evidence and the catalogue values it is
handed, and returns a `Vote` or a named `Abstention`; it never guesses past what the collector line supports.

It never votes on half a number. Before any vote, the printing must be the only one of the name the reading could
stand for (`evidence.fragments`): no other printing whose number the reading could be a piece of
(`possible-truncation`: "27" read for "270"), no suffixed twin (`suffix-sibling`: "261" and "261★"), and no reading
whose digits may be the copyright year's (`number-from-year`: "199" of "© 1993-2000") unless a total or set code
vouches for it. What else the card shows narrows the printings it could stand for first: the set code read, the
printed total, the layout (a number on a legal line is no modern printing's), the copyright year, and the set
symbol. A reading that still leaves a rival abstains, and a person decides.

A star twin ("261" and "261★": same set, total and year) is told apart only by the star glyph the pixels show
before a legal line's slash (`Evidence.collector_star`, `evidence.star_mark`), never by OCR's reading of it: the
number is taken with the star seen or without the star not seen, and the twin is then no rival. When the pixels
cannot tell, the twin stays a rival.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from stage_e_dagster.domain.calculators.matching import (
    candidate_ids,
    normalise_collector_number,
    normalise_set_code,
    pick_symbol_set,
    printed_total,
    printing_layout,
)
from stage_e_dagster.domain.catalog import CardRef, ExpansionRef, PrintingRef
from stage_e_dagster.domain.decisions import Abstention, Vote
from stage_e_dagster.domain.evidence.fragments import YEAR, from_year, height_told, rivalry, star_told, starred
from stage_e_dagster.domain.evidence.model import Evidence
from stage_e_dagster.domain.evidence.set_codes import fold, levenshtein
from stage_e_dagster.domain.printed_lines import fits

JOIN_KEY_ID = "stage-d-join-key-v2"

# Set code and number both read and both matching one printing.
CONFIDENCE_SET_AND_NUMBER = 0.85
# Number only (older frames print no set code), unique among the candidates or settled by the set symbol.
CONFIDENCE_NUMBER_ONLY = 0.75
# A known set code whose printing of this card does not exist in the catalogue.
CONFIDENCE_NO_MATCH = 0.6
# Subtracted when the filename's expansion hint names a different known set than the match.
HINT_CONTRADICTION_PENALTY = 0.15
# A printing whose set came out more than this many years after the printed copyright year is not this scan.
MAX_RELEASE_YEARS_AFTER_COPYRIGHT = 2


def read_detail(evidence: Evidence) -> dict[str, Any]:
    """What the collector and legal lines said, for skip details a reviewer can act on."""
    return {
        "collector_number": evidence.collector_number,
        "collector_normalised": normalise_collector_number(evidence.collector_number),
        "set_code": evidence.set_code,
        "set_code_raw": evidence.set_code_raw,
        "copyright_year": evidence.copyright_year,
    }


def _skip(card: CardRef, reason: str, **detail: Any) -> Abstention:
    return Abstention(card_id=card.id, anonymous_id=JOIN_KEY_ID, skip_reason=reason, detail=detail)


def _release_year(printing: PrintingRef, expansions: Mapping[str, ExpansionRef]) -> int | None:
    """Release year of the printing's expansion, falling back to the printing's own date."""
    expansion = expansions.get(printing.set_code)
    if expansion is not None and expansion.released_at is not None:
        return expansion.released_at.year
    return printing.released_at.year if printing.released_at is not None else None


def _line_fits(evidence: Evidence, printing: PrintingRef, expansions: Mapping[str, ExpansionRef]) -> bool:
    """Whether the collector line as read (its total, its layout) leaves `printing` possible."""
    total = evidence.collector_total
    if total is not None and printed_total(printing, expansions) not in (None, total):
        return False
    return fits(evidence.collector_layout, printing_layout(printing, expansions))


def _fits(evidence: Evidence, printing: PrintingRef, expansions: Mapping[str, ExpansionRef]) -> bool:
    """Whether the reading's total, layout and copyright year leave `printing` possible."""
    if not _line_fits(evidence, printing, expansions):
        return False
    released, year = _release_year(printing, expansions), evidence.copyright_year
    return released is None or year is None or -1 <= released - year <= MAX_RELEASE_YEARS_AFTER_COPYRIGHT


def doubt(evidence: Evidence, match: PrintingRef, candidates: Sequence[PrintingRef],
          expansions: Mapping[str, ExpansionRef], by_set: bool) -> tuple[str, list[PrintingRef]] | None:
    """Why the reading might not stand for `match` alone, and the rivals it might stand for; None when it singles
    `match` out. `by_set`: the set code was read and matched, so only printings of that set are rivals. A total that
    does not fit `match` either was misread, and rules no rival out."""
    if not _line_fits(evidence, match, expansions):
        evidence = replace(evidence, collector_total=None)
    number = starred(normalise_collector_number(evidence.collector_number), evidence.collector_star)
    pool = [p for p in candidates if p.id != match.id and (not by_set or p.set_code == match.set_code)
            and _fits(evidence, p, expansions)
            and not star_told(number, normalise_collector_number(p.collector_number), evidence.collector_star)
            and not height_told(number, normalise_collector_number(p.collector_number),
                                evidence.collector_end_height)]
    untrusted = (evidence.collector_total is None and not by_set
                 and from_year(number, (evidence.collector_raw, evidence.legal_raw), evidence.copyright_year))
    reason = YEAR if untrusted else None
    rivals = pool if untrusted else []
    if not untrusted:
        for printing in pool:
            kind = rivalry(number, normalise_collector_number(printing.collector_number))
            if kind is not None:
                reason = reason or kind
                rivals.append(printing)
    if not rivals:
        return None
    outside = [p for p in rivals if p.set_code != match.set_code]
    if len(outside) == len(rivals):  # every rival is of another set: the set symbol may still tell them apart
        pick = pick_symbol_set(evidence.symbol_phash, [match.set_code, *(p.set_code for p in rivals)], expansions)
        if pick.set_code == match.set_code:
            return None
    assert reason is not None
    return reason, rivals


def _total_vouches(evidence: Evidence, match: PrintingRef, expansions: Mapping[str, ExpansionRef]) -> bool:
    """Whether the total read is the match's set's printed total. A year that contradicts such a match was misread
    (small, blurred type reads 0, 3, 5, 6 and 8 for one another: "© 2000" for "© 2008"); the number and the total
    name the printing more surely, and its rivals are still weighed without the year."""
    expansion = expansions.get(match.set_code)
    return evidence.collector_total is not None and expansion is not None and \
        expansion.printed_total == evidence.collector_total


def _confirm(
    card: CardRef,
    evidence: Evidence,
    match: PrintingRef,
    confidence: float,
    expansions: Mapping[str, ExpansionRef],
    route: str,
    candidates: Sequence[PrintingRef],
    by_set: bool = False,
) -> Vote | Abstention:
    """Apply the era check, the layout check, the half-a-number guard (`doubt`) and the filename-hint adjustment to
    a match, then vote for it."""
    released = _release_year(match, expansions)
    year = evidence.copyright_year
    if released is not None and year is not None and released - year > MAX_RELEASE_YEARS_AFTER_COPYRIGHT:
        if not _total_vouches(evidence, match, expansions):
            return _skip(
                card, "copyright-year-mismatch", **read_detail(evidence),
                printing_id=match.id, printing_set_code=match.set_code, released_year=released, route=route,
            )
        evidence = replace(evidence, copyright_year=None)  # a misread year: the rest is judged without it
    if not fits(evidence.collector_layout, printing_layout(match, expansions)):
        return _skip(card, "layout-mismatch", **read_detail(evidence), printing_id=match.id, route=route,
                     printing_layout=printing_layout(match, expansions))
    doubted = doubt(evidence, match, candidates, expansions, by_set)
    if doubted is not None:
        reason, rivals = doubted
        return _skip(card, reason, **read_detail(evidence), printing_id=match.id, route=route,
                     candidate_ids=candidate_ids([match, *rivals]))
    hint = normalise_set_code(card.expansion_hint)
    if hint is not None and hint in expansions and hint != match.set_code:
        confidence -= HINT_CONTRADICTION_PENALTY
    return Vote(card_id=card.id, anonymous_id=JOIN_KEY_ID, printing_id=match.id,
                confidence=round(confidence, 4))


def _no_exact_match(
    card: CardRef,
    evidence: Evidence,
    set_code: str,
    number: str,
    candidates: Sequence[PrintingRef],
    by_number: Sequence[PrintingRef],
    expansions: Mapping[str, ExpansionRef],
) -> Vote | Abstention:
    """A known set code and a number that name none of this card's printings. A no-match vote only when every
    cross-check agrees the card was never printed in that set; anything that looks like a misread abstains or is
    read through.

    - The card has printings in the read set, just not under this number: a misread number (`number-mismatch`).
    - Exactly one printing has this number in a set whose code reads the same once look-alike characters are
      folded (`Z10` for `z1o`): the set code was misread into another real set; vote for it as number-only.
    - Another printing of the card carries the number: the set code was likely misread (`number-in-other-set`).
    - The set symbol does not confirm the read set, or cannot (no hash on either side): `set-code-unconfirmed`.
    """
    in_set = [p for p in candidates if p.set_code == set_code]
    if in_set:
        return _skip(card, "number-mismatch", **read_detail(evidence), candidate_ids=candidate_ids(in_set))
    lookalike = [p for p in by_number if fold(p.set_code) == fold(set_code)]
    if len(lookalike) == 1:
        return _confirm(card, evidence, lookalike[0], CONFIDENCE_NUMBER_ONLY, expansions, "look-alike-set-code",
                        candidates)
    if lookalike:
        return _skip(card, "ambiguous", **read_detail(evidence), route="look-alike-set-code",
                     candidate_ids=candidate_ids(lookalike))
    if by_number:
        return _skip(card, "number-in-other-set", **read_detail(evidence), candidate_ids=candidate_ids(by_number))
    pick = pick_symbol_set(evidence.symbol_phash, [set_code, *(p.set_code for p in candidates)], expansions)
    if pick.set_code != set_code:
        return _skip(card, "set-code-unconfirmed", **read_detail(evidence), symbol_reason=pick.reason,
                     symbol_distances=pick.distances)
    return Vote(card_id=card.id, anonymous_id=JOIN_KEY_ID, printing_id=None, is_no_match=True,
                confidence=CONFIDENCE_NO_MATCH)


def _near_set_code(card: CardRef, evidence: Evidence, set_code: str, by_number: Sequence[PrintingRef],
                   expansions: Mapping[str, ExpansionRef], candidates: Sequence[PrintingRef]) -> Vote | Abstention:
    """A set code that is no known set: a garbled read. When exactly one printing of the card has the number and
    its set's code is one look-alike edit from what was read (two for longer codes), the two readings agree: vote
    number-only."""
    allowed = 1 if len(set_code) <= 3 else 2
    near = [p for p in by_number if levenshtein(fold(p.set_code), fold(set_code), limit=2) <= allowed]
    if len(near) == 1 and len(by_number) == 1:
        return _confirm(card, evidence, near[0], CONFIDENCE_NUMBER_ONLY, expansions, "near-set-code", candidates)
    return _skip(card, "unknown-set-code", **read_detail(evidence), candidate_ids=candidate_ids(by_number))


def decide_join_key(
    card: CardRef,
    evidence: Evidence | None,
    candidates: Sequence[PrintingRef],
    expansions: Mapping[str, ExpansionRef],
) -> Vote | Abstention:
    """Vote for the printing the scan's collector line names, a no-match, or abstain with a named reason.

    `candidates` are the printings sharing the card's normalised name; `expansions` holds every known set. A
    number read without a set code (older frames print none) votes number-only when exactly one printing of the
    name has that number, else when the total and layout read leave one (never the year alone), else the set symbol
    settles it or the calculator abstains. A card whose name matches no printing gets no vote: its name may be
    misspelt, so its printing may well be in the catalogue.
    """
    if evidence is None:
        return _skip(card, "no-evidence", rescannable=True)
    if evidence.truncated:
        return _skip(card, "truncated-image", **read_detail(evidence))
    number = starred(normalise_collector_number(evidence.collector_number), evidence.collector_star)
    if not number:
        return _skip(card, "no-text", set_code_raw=evidence.set_code_raw, collector_raw=evidence.collector_raw)

    if not candidates:
        return _skip(card, "no-candidates", **read_detail(evidence), name=card.name)
    by_number = [p for p in candidates if normalise_collector_number(p.collector_number) == number]
    set_code = normalise_set_code(evidence.set_code)
    if set_code is not None and set_code not in expansions:
        return _near_set_code(card, evidence, set_code, by_number, expansions, candidates)
    if set_code is not None:
        exact = [p for p in by_number if p.set_code == set_code]
        if len(exact) == 1:
            return _confirm(card, evidence, exact[0], CONFIDENCE_SET_AND_NUMBER, expansions, "set-and-number",
                            candidates, by_set=True)
        if not exact:
            return _no_exact_match(card, evidence, set_code, number, candidates, by_number, expansions)
        return _skip(card, "ambiguous", **read_detail(evidence), route="set-and-number",
                     candidate_ids=candidate_ids(exact))

    if not by_number:
        return _skip(card, "number-not-found", **read_detail(evidence),
                     candidate_ids=candidate_ids(candidates))
    if len(by_number) == 1:
        return _confirm(card, evidence, by_number[0], CONFIDENCE_NUMBER_ONLY, expansions, "number-only", candidates)
    by_line = [p for p in by_number if _line_fits(evidence, p, expansions)]
    if len(by_line) == 1:  # the total or the layout read leaves one (never the year: small type misreads it)
        return _confirm(card, evidence, by_line[0], CONFIDENCE_NUMBER_ONLY, expansions, "number-and-line",
                        candidates)

    pick = pick_symbol_set(evidence.symbol_phash, (p.set_code for p in by_number), expansions)
    chosen = [p for p in by_number if p.set_code == pick.set_code]
    if len(chosen) == 1:
        return _confirm(card, evidence, chosen[0], CONFIDENCE_NUMBER_ONLY, expansions, "symbol-tie-break",
                        candidates)
    return _skip(card, "ambiguous", **read_detail(evidence), route="symbol-tie-break",
                 candidate_ids=candidate_ids(by_number), symbol_reason=pick.reason,
                 symbol_distances=pick.distances)
