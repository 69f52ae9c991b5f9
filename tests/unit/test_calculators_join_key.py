"""Decision table for the join-key calculator, plus the shared matching primitives it relies on."""

from __future__ import annotations

from datetime import date

import pytest

from stage_e_dagster.domain.calculators.join_key import JOIN_KEY_ID, decide_join_key
from stage_e_dagster.domain.calculators.matching import (
    hamming_distance,
    normalise_collector_number,
    pick_symbol_set,
)
from stage_e_dagster.domain.catalog import CardRef, ExpansionRef, PrintingRef
from stage_e_dagster.domain.decisions import Abstention, Vote
from stage_e_dagster.domain.evidence.model import Evidence


def bits(n: int, offset: int = 0) -> int:
    """A hash with n consecutive bits set starting at `offset`."""
    return ((1 << n) - 1) << offset


EXPANSIONS = {
    "2ed": ExpansionRef("2ed", date(1993, 12, 1), symbol_phash=0),
    "3ed": ExpansionRef("3ed", date(1994, 4, 1), symbol_phash=bits(20)),
    "m10": ExpansionRef("m10", date(2009, 7, 17)),
    "m11": ExpansionRef("m11", date(2010, 7, 16)),
    "sld": ExpansionRef("sld", date(2019, 12, 2)),
    "znr": ExpansionRef("znr", date(2020, 9, 25)),
}
P_2ED = PrintingRef(1, "s-2ed", "Lightning Bolt", "2ed", "162")
P_3ED = PrintingRef(2, "s-3ed", "Lightning Bolt", "3ed", "162")
P_M10 = PrintingRef(3, "s-m10", "Lightning Bolt", "m10", "146")
P_M11 = PrintingRef(4, "s-m11", "Lightning Bolt", "m11", "149")
P_SLD_A = PrintingRef(5, "s-sld-a", "Lightning Bolt", "sld", "12a")
P_SLD_STAR = PrintingRef(6, "s-sld-star", "Lightning Bolt", "sld", "7★")
CANDIDATES = [P_2ED, P_3ED, P_M10, P_M11, P_SLD_A, P_SLD_STAR]
CARD = CardRef(10, "Lightning Bolt")


def ev(number: str | None, set_code: str | None = None, **fields: object) -> Evidence:
    return Evidence(collector_number=number, set_code=set_code, set_code_raw=set_code, **fields)  # type: ignore[arg-type]


def decide(evidence: Evidence | None, card: CardRef = CARD, candidates: list[PrintingRef] = CANDIDATES,
           expansions: dict[str, ExpansionRef] = EXPANSIONS) -> Vote | Abstention:
    return decide_join_key(card, evidence, candidates, expansions)


def assert_vote(result: Vote | Abstention, printing_id: int, confidence: float) -> None:
    assert isinstance(result, Vote), result
    assert (result.printing_id, result.is_no_match, result.anonymous_id) == (printing_id, False, JOIN_KEY_ID)
    assert result.confidence == pytest.approx(confidence)
    assert result.card_id == CARD.id


def assert_skip(result: Vote | Abstention, reason: str) -> Abstention:
    assert isinstance(result, Abstention), result
    assert (result.skip_reason, result.anonymous_id, result.card_id) == (reason, JOIN_KEY_ID, CARD.id)
    return result


@pytest.mark.parametrize(
    ("evidence", "reason"),
    [
        (None, "no-evidence"),
        (ev("146", "m10", truncated=True), "truncated-image"),
        (ev(None, "m10"), "no-text"),
        (ev("   "), "no-text"),
        (ev("146", "qqq"), "unknown-set-code"),
        (ev("999"), "number-not-found"),
    ],
)
def test_skips(evidence: Evidence | None, reason: str) -> None:
    assert_skip(decide(evidence), reason)


def test_no_evidence_is_rescannable() -> None:
    assert assert_skip(decide(None), "no-evidence").detail == {"rescannable": True}


def test_unknown_set_code_detail_names_what_was_read() -> None:
    skip = assert_skip(decide(ev("146", "qqq")), "unknown-set-code")
    assert skip.detail["set_code"] == "qqq" and skip.detail["collector_number"] == "146"
    assert skip.detail["candidate_ids"] == [P_M10.id]


@pytest.mark.parametrize("garbled", ["mlo", "nl0", "m1", "m1oa"])
def test_a_garbled_set_code_near_the_only_printing_with_the_number_votes_number_only(garbled: str) -> None:
    assert_vote(decide(ev("146", garbled)), P_M10.id, 0.75)


def test_a_garbled_set_code_far_from_the_printing_or_with_two_printings_abstains() -> None:
    assert_skip(decide(ev("146", "xyz")), "unknown-set-code")  # three edits from m10
    assert_skip(decide(ev("162", "2eb")), "unknown-set-code")  # 162 is in 2ed and 3ed


@pytest.mark.parametrize(
    ("evidence", "printing_id", "confidence"),
    [
        (ev("146", "m10"), P_M10.id, 0.85),
        (ev("146", "M10"), P_M10.id, 0.85),  # set code compared lower-case
        (ev("0146", "m10"), P_M10.id, 0.85),  # leading zeros
        (ev("146/249", "m10"), P_M10.id, 0.85),  # printed total dropped
        (ev("12A", "sld"), P_SLD_A.id, 0.85),  # letter suffix case-insensitive
        (ev("07*", "sld"), P_SLD_STAR.id, 0.85),  # * and ★ equivalent
        (ev("149"), P_M11.id, 0.75),  # number only, unique among candidates
        (ev("★7"), P_SLD_STAR.id, 0.75),  # the parser writes the star first
    ],
)
def test_votes(evidence: Evidence, printing_id: int, confidence: float) -> None:
    assert_vote(decide(evidence), printing_id, confidence)


ZNR_SYMBOL = bits(30, 10)
WITH_ZNR_SYMBOL = {**EXPANSIONS, "znr": ExpansionRef("znr", date(2020, 9, 25), symbol_phash=ZNR_SYMBOL)}


def test_no_match_vote_when_the_symbol_confirms_a_set_the_card_was_never_printed_in() -> None:
    result = decide(ev("77", "znr", symbol_phash=ZNR_SYMBOL ^ 0b101), candidates=[P_2ED, P_3ED],
                    expansions=WITH_ZNR_SYMBOL)
    assert isinstance(result, Vote)
    assert result.is_no_match and result.printing_id is None
    assert result.confidence == pytest.approx(0.6)


@pytest.mark.parametrize(
    ("evidence", "expansions", "reason"),
    [
        (ev("77", "znr"), WITH_ZNR_SYMBOL, "set-code-unconfirmed"),  # no symbol hash read
        (ev("77", "znr", symbol_phash=0), WITH_ZNR_SYMBOL, "set-code-unconfirmed"),  # the symbol is 2ed's
        (ev("77", "znr", symbol_phash=ZNR_SYMBOL), EXPANSIONS, "set-code-unconfirmed"),  # znr has no reference
        # m10, m11 and sld have no reference symbol: the scan's symbol cannot rule them out
        (ev("77", "znr", symbol_phash=ZNR_SYMBOL), WITH_ZNR_SYMBOL, "set-code-unconfirmed"),
        (ev("162", "znr", symbol_phash=ZNR_SYMBOL), WITH_ZNR_SYMBOL, "number-in-other-set"),  # 2ed/3ed have 162
    ],
)
def test_no_match_is_never_voted_on_a_reading_the_cross_checks_doubt(
    evidence: Evidence, expansions: dict[str, ExpansionRef], reason: str
) -> None:
    assert_skip(decide(evidence, expansions=expansions), reason)


def test_a_name_without_printings_gets_no_vote() -> None:
    """The name may be misspelt in the file name: its printing may well be in the catalogue."""
    for evidence in (ev("146", "m10"), ev("146")):
        assert_skip(decide(evidence, candidates=[]), "no-candidates")


def test_duplicate_set_and_number_is_ambiguous() -> None:
    twin = PrintingRef(7, "s-m10-de", "Lightning Bolt", "m10", "146")
    skip = assert_skip(decide(ev("146", "m10"), candidates=[*CANDIDATES, twin]), "ambiguous")
    assert skip.detail["candidate_ids"] == [P_M10.id, twin.id]


# Evidence symbol = bits(best, 40): distance `best` to 2ed (ref 0), `best + margin` to 3ed (ref bits(margin)).
@pytest.mark.parametrize(
    ("best", "margin", "votes"),
    [
        (0, 20, True),
        (6, 7, True),  # distance exactly 6, runner-up 7 further: votes
        (7, 20, False),  # distance 7: too far
        (6, 6, False),  # runner-up exactly 6 further: not enough
        (0, 6, False),
        (0, 7, True),
    ],
)
def test_symbol_tie_break_thresholds(best: int, margin: int, votes: bool) -> None:
    expansions = {**EXPANSIONS, "3ed": ExpansionRef("3ed", date(1994, 4, 1), symbol_phash=bits(margin))}
    result = decide(ev("162", symbol_phash=bits(best, 40)), expansions=expansions)
    if votes:
        assert_vote(result, P_2ED.id, 0.75)
    else:
        skip = assert_skip(result, "ambiguous")
        assert skip.detail["candidate_ids"] == [P_2ED.id, P_3ED.id]
        assert skip.detail["symbol_distances"] == {"2ed": best, "3ed": best + margin}


def test_symbol_tie_break_picks_the_nearer_of_either_set() -> None:
    assert_vote(decide(ev("162", symbol_phash=bits(18) | bits(1, 50))), P_3ED.id, 0.75)


def test_symbol_tie_break_works_on_signed_hashes() -> None:
    negative = -(1 << 63)  # top bit set: one bit from 0
    assert_vote(decide(ev("162", symbol_phash=negative)), P_2ED.id, 0.75)


@pytest.mark.parametrize(
    ("evidence", "expansions", "symbol_reason"),
    [
        (ev("162"), EXPANSIONS, "no-symbol-hash"),
        (ev("162", symbol_phash=0), {**EXPANSIONS, "3ed": ExpansionRef("3ed")}, "missing-reference-symbol"),
    ],
)
def test_symbol_tie_break_without_readings(evidence: Evidence, expansions: dict[str, ExpansionRef],
                                            symbol_reason: str) -> None:
    skip = assert_skip(decide(evidence, expansions=expansions), "ambiguous")
    assert skip.detail["symbol_reason"] == symbol_reason


def test_shared_number_within_one_set_stays_ambiguous() -> None:
    twin = PrintingRef(8, "s-2ed-b", "Lightning Bolt", "2ed", "162")
    result = decide(ev("162", symbol_phash=0), candidates=[P_2ED, twin, P_3ED])
    assert assert_skip(result, "ambiguous").detail["candidate_ids"] == [P_2ED.id, twin.id, P_3ED.id]


@pytest.mark.parametrize(
    ("copyright_year", "votes"),
    [(2009, True), (2007, True), (2006, False), (2015, True), (None, True)],
)
def test_copyright_year_era_check(copyright_year: int | None, votes: bool) -> None:
    result = decide(ev("146", "m10", copyright_year=copyright_year))
    if votes:
        assert_vote(result, P_M10.id, 0.85)
    else:
        skip = assert_skip(result, "copyright-year-mismatch")
        assert skip.detail["released_year"] == 2009 and skip.detail["printing_id"] == P_M10.id


def test_copyright_check_applies_to_tie_broken_and_number_only_matches() -> None:
    assert_skip(decide(ev("162", symbol_phash=0, copyright_year=1990)), "copyright-year-mismatch")
    assert_skip(decide(ev("149", copyright_year=2007)), "copyright-year-mismatch")


def test_copyright_check_falls_back_to_printing_release_date() -> None:
    dated = PrintingRef(9, "s-x", "Lightning Bolt", "m10", "146", released_at=date(2012, 1, 1))
    expansions = {**EXPANSIONS, "m10": ExpansionRef("m10")}
    result = decide(ev("146", "m10", copyright_year=2009), candidates=[dated], expansions=expansions)
    assert_skip(result, "copyright-year-mismatch")


@pytest.mark.parametrize(
    ("hint", "evidence", "confidence"),
    [
        ("M11", ev("146", "m10"), 0.70),  # contradicting known set: -0.15
        ("m10", ev("146", "m10"), 0.85),  # agreeing hint
        (" M10 ", ev("146", "m10"), 0.85),
        ("proxy", ev("146", "m10"), 0.85),  # not a set code: no contradiction
        ("2ed", ev("146"), 0.60),  # number-only match contradicted
    ],
)
def test_filename_hint_contradiction_lowers_confidence(hint: str, evidence: Evidence, confidence: float) -> None:
    card = CardRef(CARD.id, CARD.name, expansion_hint=hint)
    assert_vote(decide(evidence, card=card), P_M10.id, confidence)


@pytest.mark.parametrize(
    ("raw", "normalised"),
    [("0146", "146"), ("12A", "12a"), ("7★", "7*"), ("007*", "7*"), ("★07", "7*"), ("✱7", "7*"),
     (" 14 6 ", "146"), ("000", "0"), ("123/280", "123"), (None, ""), ("", "")],
)
def test_normalise_collector_number(raw: str | None, normalised: str) -> None:
    assert normalise_collector_number(raw) == normalised


def test_hamming_distance_on_signed_values() -> None:
    assert hamming_distance(-1, 0) == 64
    assert hamming_distance(-1, -1) == 0
    assert hamming_distance(bits(6), 0) == 6


def test_pick_symbol_set_needs_two_sets() -> None:
    assert pick_symbol_set(0, ["2ed"], EXPANSIONS).set_code is None


@pytest.mark.parametrize("number", ["999", "162"])
def test_a_number_missing_from_this_cards_printing_in_the_read_set_is_a_misread(number: str) -> None:
    skip = assert_skip(decide(ev(number, "m10")), "number-mismatch")
    assert skip.detail["candidate_ids"] == [P_M10.id]


LOOKALIKE_SETS = {**EXPANSIONS, "z1o": ExpansionRef("z1o", date(2021, 1, 1)),
                  "z10": ExpansionRef("z10", date(2022, 1, 1))}
OPT_Z1O = PrintingRef(20, "s-opt-z1o", "Opt", "z1o", "130")
OPT_CARD = CardRef(10, "Opt")


def test_a_set_code_misread_into_its_look_alike_twin_is_read_through() -> None:
    result = decide(ev("130", "z10"), card=OPT_CARD, candidates=[OPT_Z1O], expansions=LOOKALIKE_SETS)
    assert_vote(result, OPT_Z1O.id, 0.75)


def test_look_alike_twins_that_both_fit_are_ambiguous() -> None:
    twins = [OPT_Z1O, PrintingRef(21, "s-opt-zio", "Opt", "zio", "130")]
    sets = {**LOOKALIKE_SETS, "zio": ExpansionRef("zio", date(2023, 1, 1))}
    assert_skip(decide(ev("130", "z10"), card=OPT_CARD, candidates=twins, expansions=sets), "ambiguous")
