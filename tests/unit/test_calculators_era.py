"""The era calculator: cards printed before collector numbers, told apart by copyright year, border and set symbol
when that is unique among the name's printings, routed with the short list otherwise."""

from __future__ import annotations

from datetime import date

import pytest

from stage_e_dagster.domain.calculators import ERA_ID, FALLBACK_ID, JOIN_KEY_ID, run_calculators
from stage_e_dagster.domain.calculators.era import decide_era
from stage_e_dagster.domain.calculators.matching import SYMBOL_MAX_DISTANCE, with_symbol_twins
from stage_e_dagster.domain.catalog import CardRef, ExpansionRef, PrintingRef
from stage_e_dagster.domain.decisions import Abstention, Vote
from stage_e_dagster.domain.evidence.model import AMBIGUOUS_BORDER, Evidence


def bits(n: int, offset: int = 0) -> int:
    return ((1 << n) - 1) << offset


EXPANSIONS = {
    "lea": ExpansionRef("lea", date(1993, 8, 5)),  # no reference symbol
    "leb": ExpansionRef("leb", date(1993, 10, 4)),
    "3ed": ExpansionRef("3ed", date(1994, 4, 1), symbol_phash=bits(20)),
    "4ed": ExpansionRef("4ed", date(1995, 4, 1), symbol_phash=bits(20, 40)),
    "chr": ExpansionRef("chr", date(1995, 7, 1), symbol_phash=bits(20, 40) ^ bits(5)),  # 4ed's near twin
    "ice": ExpansionRef("ice", date(1995, 6, 1), symbol_phash=bits(20, 20)),
    "5ed": ExpansionRef("5ed", date(1997, 3, 24), symbol_phash=bits(10, 5)),
    "m10": ExpansionRef("m10", date(2009, 7, 17), symbol_phash=bits(30, 30)),
}
LEA = PrintingRef(1, "a", "Dark Ritual", "lea", "98", border_color="black", frame="1993")
LEB = PrintingRef(2, "b", "Dark Ritual", "leb", "98", border_color="black", frame="1993")
P3ED = PrintingRef(3, "c", "Dark Ritual", "3ed", "98", border_color="white", frame="1993")
P4ED = PrintingRef(4, "d", "Dark Ritual", "4ed", "99", border_color="white", frame="1993")
CHR = PrintingRef(5, "e", "Dark Ritual", "chr", "12", border_color="white", frame="1993")
ICE = PrintingRef(6, "f", "Dark Ritual", "ice", "120", border_color="black", frame="1993")
P5ED = PrintingRef(7, "g", "Dark Ritual", "5ed", "137", border_color="white", frame="1993")
M10 = PrintingRef(8, "h", "Dark Ritual", "m10", "91", border_color="black", frame="2003")
ALL = [LEA, LEB, P3ED, P4ED, CHR, ICE, P5ED, M10]
CARD = CardRef(3, "Dark Ritual")
SCAN_4ED = bits(20, 40) ^ bits(4, 5)  # 4 bits from 4ed's symbol, 9 from chr's: only the twin rule keeps chr


def ev(year: int | None, border: str | None = None, symbol: int | None = None, number: str | None = None
       ) -> Evidence:
    return Evidence(copyright_year=year, border_color=border, symbol_phash=symbol, collector_number=number)


def decide(evidence: Evidence | None, candidates: list[PrintingRef] = ALL) -> Vote | Abstention:
    return decide_era(CARD, evidence, candidates, EXPANSIONS)


@pytest.mark.parametrize(("evidence", "printing"), [
    (ev(1994, "white"), None),  # the year keeps 3ed and 4ed/chr/ice (a year later), the border drops ice
    (ev(1994, "white", bits(20)), P3ED),  # and 3ed's symbol settles it
    (ev(1997, "white"), P5ED),  # the year alone
    (ev(1995, "black"), ICE),  # year and border: ice is the one black-bordered 1995 printing
    (ev(1995, "white", SCAN_4ED), None),  # 4ed's symbol, but chr's is its twin: not told apart
    (ev(1995, "white", bits(20, 20)), None),  # ice's symbol on a white border: eliminated
    (ev(1993, "white"), P3ED),  # 1993-1994 white: 3ed (lea and leb are black)
])
def test_unique_pre_1998_printings_get_a_vote_and_twins_do_not(evidence: Evidence, printing: PrintingRef | None
                                                              ) -> None:
    result = decide(evidence)
    if printing is None:
        assert isinstance(result, Abstention) and result.skip_reason in ("ambiguous", "eliminated"), result
    else:
        assert isinstance(result, Vote) and result.printing_id == printing.id, result
        assert result.anonymous_id == ERA_ID


def test_distinct_symbols_decide_where_twins_cannot() -> None:
    distinct = {**EXPANSIONS, "chr": ExpansionRef("chr", date(1995, 7, 1), symbol_phash=bits(20, 10))}
    result = decide_era(CARD, ev(1995, "white", SCAN_4ED), ALL, distinct)
    assert isinstance(result, Vote) and result.printing_id == P4ED.id
    twins = decide(ev(1995, "white", SCAN_4ED))
    assert isinstance(twins, Abstention) and twins.skip_reason == "ambiguous"
    assert sorted(twins.detail["candidate_ids"]) == [P4ED.id, CHR.id]


def test_with_symbol_twins_keeps_sets_whose_reference_symbols_are_near_identical() -> None:
    assert with_symbol_twins({"4ed"}, ["4ed", "chr", "ice"], EXPANSIONS) == {"4ed", "chr"}
    far = bits(SYMBOL_MAX_DISTANCE + 1)
    apart = {"x": ExpansionRef("x", symbol_phash=0), "y": ExpansionRef("y", symbol_phash=far)}
    assert with_symbol_twins({"x"}, ["x", "y"], apart) == {"x"}


def test_ambiguous_cards_are_routed_with_the_short_list_of_candidates() -> None:
    result = decide(ev(1993, "black"))  # alpha or beta: same year, border and no symbol to compare
    assert isinstance(result, Abstention) and result.skip_reason == "ambiguous"
    assert result.detail["candidate_ids"] == [LEA.id, LEB.id]
    assert M10.id not in result.detail["numberless_ids"]
    outcome = run_calculators(CARD, ev(1993, "black"), ALL, EXPANSIONS)
    assert outcome.slow_path is not None
    assert outcome.slow_path.detail["era"]["detail"]["candidate_ids"] == [LEA.id, LEB.id]
    assert "era:ambiguous" in outcome.slow_path.detail["why"]


def test_a_unique_pre_1998_card_is_decided_without_review_and_without_the_fallback() -> None:
    outcome = run_calculators(CARD, ev(1997, "white"), ALL, EXPANSIONS)
    assert outcome.results[JOIN_KEY_ID].skip_reason == "no-text"  # type: ignore[union-attr]
    assert [(v.anonymous_id, v.printing_id) for v in outcome.votes] == [(ERA_ID, P5ED.id)]
    assert outcome.results[FALLBACK_ID] is None and outcome.slow_path is None


@pytest.mark.parametrize(("evidence", "reason"), [
    (None, "no-evidence"),
    (ev(1995, "white", number="99"), "numbered"),  # a number of the name's printings read: the join key's card
    (ev(None, "white"), "not-numberless-era"),  # no year read: nothing says the card is old
    (ev(2009, "black"), "not-numberless-era"),
])
def test_the_calculator_applies_only_to_numberless_scans_of_the_era(evidence: Evidence | None, reason: str) -> None:
    result = decide(evidence)
    assert isinstance(result, Abstention) and result.skip_reason == reason


def test_numbered_printings_are_never_candidates() -> None:
    result = decide(ev(1995, "black"), [M10])
    assert isinstance(result, Abstention) and result.skip_reason == "no-numberless-printing"
    # a modern reprint beside one old printing: the old one, never the reprint
    only_old = decide(ev(1995, None), [ICE, M10])
    assert isinstance(only_old, Vote) and only_old.printing_id == ICE.id


def test_an_ambiguous_border_claims_nothing() -> None:
    result = decide(ev(1995, AMBIGUOUS_BORDER))
    assert isinstance(result, Abstention) and result.skip_reason == "ambiguous"
    assert sorted(result.detail["candidate_ids"]) == [P4ED.id, CHR.id, ICE.id]


def test_a_number_no_printing_has_is_a_misread_speck_and_does_not_stop_the_calculator() -> None:
    result = decide(ev(1997, "white", number="5"))
    assert isinstance(result, Vote) and result.printing_id == P5ED.id
