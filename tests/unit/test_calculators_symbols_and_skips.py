"""The calculators' shared symbol rules at their edges, and what the era and fallback calculators say when they
skip or vote: a symbol `SYMBOL_MAX_DISTANCE` bits away shows the set and one bit more does not; the nearest set wins
by more than `SYMBOL_MARGIN`, not by exactly it; near-identical reference symbols are kept together; a printing's
layout comes from its set's release day, else its own; the era calculator applies up to the year before numbers
were printed everywhere, not from it; and every skip's detail (what the scan log and a reviewer read) is pinned."""

from __future__ import annotations

from datetime import date

from stage_e_dagster.domain.calculators.era import ERA_ID, decide_era, numberless
from stage_e_dagster.domain.calculators.fallback import FALLBACK_ID, decide_fallback, printings_showing_symbol
from stage_e_dagster.domain.calculators.matching import (
    SYMBOL_MARGIN,
    SYMBOL_MAX_DISTANCE,
    SymbolPick,
    pick_symbol_set,
    printing_layout,
    with_symbol_twins,
)
from stage_e_dagster.domain.catalog import CardRef, ExpansionRef, PrintingRef
from stage_e_dagster.domain.decisions import Abstention, Vote
from stage_e_dagster.domain.evidence.model import Evidence
from stage_e_dagster.domain.printed_lines import CENTRED, NUMBERLESS


def bits(n: int, offset: int = 0) -> int:
    return ((1 << n) - 1) << offset


def _sets(**phashes: int | None) -> dict[str, ExpansionRef]:
    return {code: ExpansionRef(code, date(2000, 1, 1), symbol_phash=phash) for code, phash in phashes.items()}


CARD = CardRef(3, "Dark Ritual")


# -- matching: the symbol pick, twins, a printing's layout ---------------------------------------------------------

def test_the_symbol_pick_says_why_with_the_distances() -> None:
    sets = _sets(aaa=bits(2), bbb=bits(40, 20), ccc=None)
    assert pick_symbol_set(None, ["aaa", "bbb"], sets) == SymbolPick(None, {}, "no-symbol-hash")
    assert pick_symbol_set(0, ["aaa", "ccc"], sets) == SymbolPick(None, {"aaa": 2}, "missing-reference-symbol")
    assert pick_symbol_set(0, ["aaa", "aaa"], sets) == SymbolPick(None, {"aaa": 2}, "one-set-only")
    assert pick_symbol_set(0, ["bbb", "aaa"], sets) == SymbolPick("aaa", {"aaa": 2, "bbb": 40}, "symbol-match")


def test_the_symbol_pick_at_its_distance_and_margin_edges() -> None:
    far = SYMBOL_MAX_DISTANCE + SYMBOL_MARGIN + 1
    at_edge = _sets(aaa=bits(SYMBOL_MAX_DISTANCE), bbb=bits(far, 20))
    assert pick_symbol_set(0, ["aaa", "bbb"], at_edge).reason == "symbol-match"
    past = _sets(aaa=bits(SYMBOL_MAX_DISTANCE + 1), bbb=bits(far + 1, 20))
    assert pick_symbol_set(0, ["aaa", "bbb"], past) == SymbolPick(
        None, {"aaa": SYMBOL_MAX_DISTANCE + 1, "bbb": far + 1}, "symbol-too-far")
    just_clear = _sets(aaa=bits(1), bbb=bits(1 + SYMBOL_MARGIN + 1, 20))
    assert pick_symbol_set(0, ["aaa", "bbb"], just_clear).set_code == "aaa"
    not_clear = _sets(aaa=bits(1), bbb=bits(1 + SYMBOL_MARGIN, 20))
    assert pick_symbol_set(0, ["aaa", "bbb"], not_clear) == SymbolPick(
        None, {"aaa": 1, "bbb": 1 + SYMBOL_MARGIN}, "symbol-margin-too-small")


def test_near_identical_symbols_are_kept_together_and_sets_without_one_stay_kept() -> None:
    sets = _sets(aaa=0, twin=bits(SYMBOL_MAX_DISTANCE), apart=bits(SYMBOL_MAX_DISTANCE + 1), bare=None)
    codes = ["aaa", "twin", "apart", "bare", "unknown"]
    assert with_symbol_twins({"aaa"}, codes, sets) == {"aaa", "twin"}
    no_refs = {f"n{i:02d}" for i in range(30)}  # kept sets without a reference, seen in any order
    assert with_symbol_twins({"aaa", "bare", *no_refs}, codes, sets) == {"aaa", "twin", "bare", *no_refs}


def test_a_printings_layout_comes_from_its_sets_release_day_else_its_own() -> None:
    printing = PrintingRef(1, "s", "Opt", "vis", "1", released_at=date(1997, 2, 3), frame="1997")
    assert printing_layout(printing, {"vis": ExpansionRef("vis", date(1999, 1, 1))}) == CENTRED
    assert printing_layout(printing, {"vis": ExpansionRef("vis", None)}) == NUMBERLESS
    assert printing_layout(printing, {}) == NUMBERLESS


# -- the fallback --------------------------------------------------------------------------------------------------

def test_the_fallbacks_symbol_check_at_its_distance_edge_and_its_nearest_set() -> None:
    printings = [PrintingRef(1, "a", "X", "aaa", "1"), PrintingRef(2, "b", "X", "zzz", "1")]
    at_edge = _sets(aaa=bits(SYMBOL_MAX_DISTANCE), zzz=bits(SYMBOL_MAX_DISTANCE + 2, 20))
    assert printings_showing_symbol(Evidence(symbol_phash=0), printings, at_edge) == {1}
    nearest_last = _sets(aaa=bits(20), zzz=bits(SYMBOL_MAX_DISTANCE + 2, 30))
    assert printings_showing_symbol(Evidence(symbol_phash=0), printings, nearest_last) == {2}


def test_the_fallbacks_layout_check_reads_each_printings_layout() -> None:
    centred = PrintingRef(1, "a", "X", "new", "1", released_at=date(1997, 1, 1), frame="1997")
    old = PrintingRef(2, "b", "X", "old", "1", released_at=date(1999, 1, 1), frame="1997")
    sets = {"new": ExpansionRef("new", date(1999, 1, 1)), "old": ExpansionRef("old", date(1997, 1, 1))}
    vote = decide_fallback(CARD, Evidence(collector_layout=CENTRED), [centred, old], sets)
    assert vote == Vote(CARD.id, FALLBACK_ID, 1, confidence=0.7)


def test_the_fallbacks_skips_name_what_a_reviewer_needs() -> None:
    one, two = PrintingRef(1, "a", "X", "aaa", "1"), PrintingRef(2, "b", "X", "bbb", "1")
    assert decide_fallback(CARD, None, [one], {}) == Abstention(CARD.id, FALLBACK_ID, "no-evidence",
                                                                {"rescannable": True})
    assert decide_fallback(CARD, Evidence(), [], {}) == Abstention(CARD.id, FALLBACK_ID, "no-candidates",
                                                                   {"name": "Dark Ritual"})
    assert decide_fallback(CARD, Evidence(), [one, two], {}) == Abstention(
        CARD.id, FALLBACK_ID, "no-sub-check-evidence", {"candidate_ids": [1, 2]})
    assert decide_fallback(CARD, Evidence(collector_layout=CENTRED), [one, two], {}) == Abstention(
        CARD.id, FALLBACK_ID, "ambiguous",
        {"survivor_ids": [1, 2], "sub_checks": {"layout": [1, 2]}, "candidate_ids": [1, 2]})


# -- the era calculator --------------------------------------------------------------------------------------------

LEA = PrintingRef(1, "a", "Dark Ritual", "lea", "98", border_color="black", frame="1993")
LEB = PrintingRef(2, "b", "Dark Ritual", "leb", "98", border_color="black", frame="1993")
P2ED = PrintingRef(3, "c", "Dark Ritual", "2ed", "98", border_color="white", frame="1993")
P4ED = PrintingRef(4, "d", "Dark Ritual", "4ed", "99", border_color="white", frame="1993")
M10 = PrintingRef(8, "h", "Dark Ritual", "m10", "91", border_color="black", frame="2003")
ERA_SETS = {"lea": ExpansionRef("lea", date(1993, 8, 5)), "leb": ExpansionRef("leb", date(1993, 10, 4)),
            "2ed": ExpansionRef("2ed", date(1993, 12, 1)), "4ed": ExpansionRef("4ed", date(1995, 4, 1)),
            "m10": ExpansionRef("m10", date(2009, 7, 17))}
OLD = [LEA, LEB, P2ED, P4ED]


def _era(evidence: Evidence | None, candidates: list[PrintingRef] = OLD) -> Vote | Abstention:
    return decide_era(CARD, evidence, candidates, ERA_SETS)


def test_a_printing_is_numberless_before_the_day_numbers_began_in_an_old_or_unknown_frame() -> None:
    def printing(released: date | None, frame: str | None = "1997") -> PrintingRef:
        return PrintingRef(1, "a", "X", "zzz", "1", released_at=released, frame=frame)
    assert numberless(printing(date(1998, 5, 31)), {})
    assert not numberless(printing(date(1998, 6, 1)), {})
    assert numberless(printing(None), {}) and numberless(printing(None, None), {})
    assert not numberless(printing(None, "2003"), {})
    assert not numberless(printing(date(1990, 1, 1)), {"zzz": ExpansionRef("zzz", date(1998, 6, 1))})


def test_the_era_calculator_applies_up_to_the_year_before_numbers_were_everywhere() -> None:
    old_1998 = PrintingRef(9, "z", "Dark Ritual", "tmp", "1", released_at=date(1998, 5, 1), frame="1997")
    assert _era(Evidence(copyright_year=1998), [old_1998]) == Vote(CARD.id, ERA_ID, 9, confidence=0.7)
    assert _era(Evidence(copyright_year=1999), [old_1998]) == Abstention(CARD.id, ERA_ID, "not-numberless-era",
                                                                          {"copyright_year": 1999})
    assert _era(Evidence(), [old_1998]) == Abstention(CARD.id, ERA_ID, "not-numberless-era", {"copyright_year": None})


def test_the_era_calculators_votes_and_skips() -> None:
    assert _era(None) == Abstention(CARD.id, ERA_ID, "no-evidence", {"rescannable": True})
    assert _era(Evidence(copyright_year=1993, truncated=True)) == Abstention(CARD.id, ERA_ID, "truncated-image")
    assert _era(Evidence(copyright_year=1993), [M10]) == Abstention(
        CARD.id, ERA_ID, "no-numberless-printing", {"name": "Dark Ritual", "copyright_year": 1993,
                                                    "candidate_ids": [8]})
    assert _era(Evidence(copyright_year=1995)) == Vote(CARD.id, ERA_ID, 4, confidence=0.7), "the year alone"
    assert _era(Evidence(copyright_year=1993, border_color="white")) == Vote(CARD.id, ERA_ID, 3, confidence=0.75)
    assert _era(Evidence(copyright_year=1993)) == Abstention(CARD.id, ERA_ID, "ambiguous", {
        "copyright_year": 1993, "border_color": None, "candidate_ids": [1, 2, 3], "numberless_ids": [1, 2, 3, 4],
        "checks": {"year": [1, 2, 3]}})
    eliminated = _era(Evidence(copyright_year=1995, border_color="black"))
    assert (eliminated.skip_reason, eliminated.detail["candidate_ids"]) == ("eliminated", [])
    assert eliminated.detail["checks"] == {"year": [4], "border": [1, 2]}
