"""Decision table for the fallback calculator and its sub-checks."""

from __future__ import annotations

from datetime import date

import pytest

from stage_e_dagster.domain.calculators.fallback import (
    FALLBACK_ID,
    border_check,
    decide_fallback,
    hint_check,
    symbol_check,
    total_check,
)
from stage_e_dagster.domain.calculators.join_key import JOIN_KEY_ID
from stage_e_dagster.domain.calculators.registry import is_confident_hit
from stage_e_dagster.domain.catalog import CardRef, ExpansionRef, PrintingRef
from stage_e_dagster.domain.decisions import Abstention, Vote
from stage_e_dagster.domain.evidence.model import Evidence


def bits(n: int, offset: int = 0) -> int:
    return ((1 << n) - 1) << offset


EXPANSIONS = {
    "lea": ExpansionRef("lea", date(1993, 8, 5), symbol_phash=bits(40)),
    "2ed": ExpansionRef("2ed", date(1993, 12, 1), symbol_phash=0),
    "3ed": ExpansionRef("3ed", date(1994, 4, 1), symbol_phash=bits(30)),
    "m10": ExpansionRef("m10", date(2009, 7, 17), symbol_phash=bits(20, 40)),
    "m11": ExpansionRef("m11", date(2010, 7, 16), symbol_phash=bits(20, 20)),
}
P_2ED = PrintingRef(1, "a", "Shock", "2ed", "10", border_color="white")
P_3ED = PrintingRef(2, "b", "Shock", "3ed", "10", border_color="white")
P_M10 = PrintingRef(3, "c", "Shock", "m10", "20", border_color="black")
P_M11 = PrintingRef(4, "d", "Shock", "m11", "21", border_color="black")
CANDIDATES = [P_2ED, P_3ED, P_M10, P_M11]
CARD = CardRef(5, "Shock")


def hinted(hint: str | None) -> CardRef:
    return CardRef(CARD.id, CARD.name, expansion_hint=hint)


def decide(evidence: Evidence | None, card: CardRef = CARD, candidates: list[PrintingRef] = CANDIDATES,
           expansions: dict[str, ExpansionRef] = EXPANSIONS) -> Vote | Abstention:
    return decide_fallback(card, evidence, candidates, expansions)


@pytest.mark.parametrize(
    ("card", "evidence", "printing_id", "confidence"),
    [
        (hinted("m11"), Evidence(border_color="black"), P_M11.id, 0.8),  # border + hint
        (hinted("M11"), Evidence(), P_M11.id, 0.7),  # hint alone
        (CARD, Evidence(symbol_phash=bits(17, 43)), P_M10.id, 0.7),  # symbol alone, 3 bits from m10
        (CARD, Evidence(symbol_phash=bits(17, 43), border_color="black"), P_M10.id, 0.8),
        (CARD, Evidence(symbol_phash=bits(6), border_color="white"), P_2ED.id, 0.8),  # distance exactly 6
        (hinted("3ed"), Evidence(symbol_phash=bits(28), border_color="white"), P_3ED.id, 0.8),
    ],
)
def test_votes(card: CardRef, evidence: Evidence, printing_id: int, confidence: float) -> None:
    result = decide(evidence, card=card)
    assert isinstance(result, Vote), result
    assert (result.printing_id, result.anonymous_id, result.is_no_match) == (printing_id, FALLBACK_ID, False)
    assert result.confidence == pytest.approx(confidence)


@pytest.mark.parametrize(
    ("card", "evidence", "reason", "survivors"),
    [
        (CARD, Evidence(border_color="black"), "ambiguous", [P_M10.id, P_M11.id]),
        (CARD, Evidence(border_color="white"), "ambiguous", [P_2ED.id, P_3ED.id]),
        (hinted("2ed"), Evidence(border_color="black"), "eliminated", []),
        (hinted("m10"), Evidence(symbol_phash=0), "eliminated", []),
        (CARD, Evidence(), "no-sub-check-evidence", None),
        (hinted("proxy"), Evidence(), "no-sub-check-evidence", None),  # hint that names no known set
    ],
)
def test_skips(card: CardRef, evidence: Evidence, reason: str, survivors: list[int] | None) -> None:
    result = decide(evidence, card=card)
    assert isinstance(result, Abstention), result
    assert (result.skip_reason, result.anonymous_id) == (reason, FALLBACK_ID)
    if survivors is not None:
        assert result.detail["survivor_ids"] == survivors


@pytest.mark.parametrize(
    ("evidence", "candidates", "reason"),
    [
        (None, CANDIDATES, "no-evidence"),
        (Evidence(border_color="black", truncated=True), CANDIDATES, "truncated-image"),
        (Evidence(border_color="black"), [], "no-candidates"),
    ],
)
def test_guard_skips(evidence: Evidence | None, candidates: list[PrintingRef], reason: str) -> None:
    result = decide(evidence, candidates=candidates)
    assert isinstance(result, Abstention) and result.skip_reason == reason


def test_skip_detail_lists_each_sub_check() -> None:
    result = decide(Evidence(border_color="black"), card=hinted("2ed"))
    assert isinstance(result, Abstention)
    assert result.detail["sub_checks"] == {"border": [P_M10.id, P_M11.id], "hint": [P_2ED.id]}


def test_never_casts_a_no_match_vote() -> None:
    cards = [CARD, hinted("m10"), hinted("2ed"), hinted("m11")]
    evidences = [Evidence(), Evidence(border_color="gold"), Evidence(symbol_phash=-1), Evidence(symbol_phash=0)]
    for card in cards:
        for evidence in evidences:
            result = decide(evidence, card=card)
            assert not (isinstance(result, Vote) and result.is_no_match)


def test_border_check() -> None:
    unknown = PrintingRef(9, "z", "Shock", "m11", "22")
    assert border_check(CARD, Evidence(), CANDIDATES, EXPANSIONS) is None
    assert border_check(CARD, Evidence(border_color="black"), [unknown], EXPANSIONS) is None
    assert border_check(CARD, Evidence(border_color="ambiguous"), CANDIDATES, EXPANSIONS) is None  # no claim
    kept = border_check(CARD, Evidence(border_color="BLACK"), [*CANDIDATES, unknown], EXPANSIONS)
    assert kept == {P_M10.id, P_M11.id, unknown.id}  # unknown border cannot be ruled out


# Candidates from 2ed (ref 0) and 3ed (ref bits(30)); the scan's symbol is `bits(n, 32)`: n to 2ed, n+30 to 3ed.
@pytest.mark.parametrize(
    ("n", "kept"),
    [
        (6, {1}),  # within the threshold
        (7, {1}),  # nearest, within the ceiling, clear margin
        (12, {1}),
        (13, set()),  # past the ceiling: nothing kept
    ],
)
def test_symbol_check_threshold_and_nearest(n: int, kept: set[int]) -> None:
    assert symbol_check(CARD, Evidence(symbol_phash=bits(n, 32)), [P_2ED, P_3ED], EXPANSIONS) == kept


def test_symbol_check_nearest_needs_a_clear_margin() -> None:
    expansions = {**EXPANSIONS, "3ed": ExpansionRef("3ed", symbol_phash=bits(6))}
    # 8 to 2ed, 14 to 3ed: margin 6 is not clear.
    assert symbol_check(CARD, Evidence(symbol_phash=bits(8, 32)), [P_2ED, P_3ED], expansions) == set()
    expansions = {**EXPANSIONS, "3ed": ExpansionRef("3ed", symbol_phash=bits(7))}
    assert symbol_check(CARD, Evidence(symbol_phash=bits(8, 32)), [P_2ED, P_3ED], expansions) == {P_2ED.id}


def test_symbol_check_without_reading() -> None:
    unreferenced = PrintingRef(9, "z", "Shock", "m12", "22")
    assert symbol_check(CARD, Evidence(), CANDIDATES, EXPANSIONS) is None
    assert symbol_check(CARD, Evidence(symbol_phash=0), [unreferenced], EXPANSIONS) is None


def test_symbol_check_keeps_sets_without_a_reference() -> None:
    expansions = {**EXPANSIONS, "m11": ExpansionRef("m11")}
    kept = symbol_check(CARD, Evidence(symbol_phash=bits(17, 43)), CANDIDATES, expansions)
    assert kept == {P_M10.id, P_M11.id}
    result = decide(Evidence(symbol_phash=bits(17, 43)), expansions=expansions)
    assert isinstance(result, Abstention) and result.skip_reason == "ambiguous"


def test_hint_check() -> None:
    assert hint_check(CARD, Evidence(), CANDIDATES, EXPANSIONS) is None
    assert hint_check(hinted("xyz"), Evidence(), CANDIDATES, EXPANSIONS) is None
    assert hint_check(hinted("lea"), Evidence(), CANDIDATES, EXPANSIONS) == set()
    assert hint_check(hinted(" M10 "), Evidence(), CANDIDATES, EXPANSIONS) == {P_M10.id}


def test_a_total_read_outweighs_a_set_symbol_nearer_another_sets_reference() -> None:
    """"105★/126" read on a card whose set symbol hashes nearest another set's: the line names a set of 126, so
    the symbol's set is ruled out and the fallback does not vote against the number's set."""
    expansions = {**EXPANSIONS, "m10": ExpansionRef("m10", symbol_phash=bits(20, 40), printed_total=249),
                  "m11": ExpansionRef("m11", symbol_phash=bits(20, 20), printed_total=126)}
    evidence = Evidence(symbol_phash=bits(17, 43), collector_number="105", collector_total=126)
    assert symbol_check(CARD, evidence, [P_M10, P_M11], expansions) == {P_M10.id}
    result = decide(evidence, candidates=[P_M10, P_M11], expansions=expansions)
    assert isinstance(result, Abstention) and result.skip_reason == "eliminated", result
    assert result.detail["sub_checks"]["total"] == [P_M11.id]
    agreeing = decide(Evidence(symbol_phash=bits(17, 43), collector_total=249), candidates=[P_M10, P_M11],
                      expansions=expansions)
    assert agreeing == Vote(CARD.id, FALLBACK_ID, P_M10.id, confidence=0.8)


def test_total_check() -> None:
    expansions = {**EXPANSIONS, "m10": ExpansionRef("m10", printed_total=249),
                  "m11": ExpansionRef("m11", printed_total=126)}
    assert total_check(CARD, Evidence(), CANDIDATES, expansions) is None  # no total read
    assert total_check(CARD, Evidence(collector_total=126), CANDIDATES, expansions) == \
        {P_2ED.id, P_3ED.id, P_M11.id}  # sets of unknown size stay in
    assert total_check(CARD, Evidence(collector_total=127), CANDIDATES, expansions) is None  # no set prints it


@pytest.mark.parametrize(
    ("result", "confident"),
    [
        (Vote(1, JOIN_KEY_ID, 7, confidence=0.85), True),
        (Vote(1, JOIN_KEY_ID, 7, confidence=0.8), True),
        (Vote(1, JOIN_KEY_ID, 7, confidence=0.75), False),  # number only: the fallback gives a second opinion
        (Vote(1, JOIN_KEY_ID, None, is_no_match=True, confidence=0.6), False),
        (Vote(1, FALLBACK_ID, 7, confidence=0.7), True),  # any fallback printing vote keeps a card out of review
        (Vote(1, "stage-d-other-v1", 7, confidence=0.99), False),  # not a registered calculator
        (Abstention(1, JOIN_KEY_ID, "ambiguous"), False),
        (None, False),
    ],
)
def test_is_confident_hit(result: Vote | Abstention | None, confident: bool) -> None:
    assert is_confident_hit(result) is confident
