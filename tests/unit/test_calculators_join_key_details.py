"""The join-key calculator's every skip with its whole detail (what the scan log and a reviewer read: the reading,
the printing it pointed at, the route that found it, the rivals), each route named where a later check stops it,
the copyright-year window of a rival on both sides of its edges, a rival of another layout or total left out, the
set symbol that settles a rival of another set, and how far a garbled set code may be from a real one."""

from __future__ import annotations

from datetime import date

from stage_e_dagster.domain.calculators.join_key import JOIN_KEY_ID, decide_join_key
from stage_e_dagster.domain.catalog import CardRef, ExpansionRef, PrintingRef
from stage_e_dagster.domain.decisions import Abstention, Vote
from stage_e_dagster.domain.evidence.model import Evidence

CARD = CardRef(10, "Bolt")


def _set(code: str, year: int, phash: int | None = None, total: int | None = None) -> ExpansionRef:
    return ExpansionRef(code, date(year, 6, 1), symbol_phash=phash, printed_total=total)


def _p(pid: int, code: str, number: str, frame: str | None = None) -> PrintingRef:
    return PrintingRef(pid, f"s{pid}", "Bolt", code, number, frame=frame)


def _ev(number: str | None, set_code: str | None = None, **fields: object) -> Evidence:
    return Evidence(collector_number=number, set_code=set_code, set_code_raw=set_code and set_code.upper(),
                    collector_raw=number, **fields)  # type: ignore[arg-type]


def _read(evidence: Evidence) -> dict:
    return {"collector_number": evidence.collector_number, "collector_normalised": evidence.collector_number
            and evidence.collector_number.lstrip("0"), "set_code": evidence.set_code,
            "set_code_raw": evidence.set_code_raw, "copyright_year": evidence.copyright_year}


def _skip(reason: str, **detail: object) -> Abstention:
    return Abstention(CARD.id, JOIN_KEY_ID, reason, detail)


SETS = {"aaa": _set("aaa", 2009, phash=0), "bbb": _set("bbb", 2010, phash=(1 << 40) - 1), "ccc": _set("ccc", 2011),
        "dddd": _set("dddd", 2012), "zzz": _set("zzz", 2013)}


def decide(evidence: Evidence | None, candidates: list[PrintingRef], sets: dict = SETS) -> Vote | Abstention:
    return decide_join_key(CARD, evidence, candidates, sets)


def test_the_guard_skips_say_what_was_read() -> None:
    truncated = _ev("7", "aaa", truncated=True)
    assert decide(truncated, [_p(1, "aaa", "7")]) == _skip("truncated-image", **_read(truncated))
    assert decide(Evidence(collector_raw="x", set_code_raw="Q"), [_p(1, "aaa", "7")]) == _skip(
        "no-text", set_code_raw="Q", collector_raw="x")
    nothing = _ev("7", "aaa")
    assert decide(nothing, []) == _skip("no-candidates", **_read(nothing), name="Bolt")


def test_each_route_is_named_where_the_copyright_year_stops_it() -> None:
    """A copyright year far before every printing's release stops each route's match; the skip names the route."""
    def stopped(evidence: Evidence, candidates: list[PrintingRef], route: str, match: PrintingRef) -> None:
        released = SETS[match.set_code].released_at.year
        assert decide(evidence, candidates) == _skip(
            "copyright-year-mismatch", **_read(evidence), printing_id=match.id, printing_set_code=match.set_code,
            released_year=released, route=route)

    one, two = _p(1, "aaa", "7"), _p(2, "bbb", "7")
    stopped(_ev("7", "aaa", copyright_year=1995), [one, two], "set-and-number", one)
    stopped(_ev("7", "aab", copyright_year=1995), [one], "near-set-code", one)
    stopped(_ev("7", copyright_year=1995), [one], "number-only", one)
    stopped(_ev("7", copyright_year=1995, symbol_phash=0), [one, two], "symbol-tie-break", one)
    lookalike = {**SETS, "b8b": _set("b8b", 2001)}
    assert decide(_ev("7", "b8b", copyright_year=1995), [two], lookalike) == _skip(
        "copyright-year-mismatch", **_read(_ev("7", "b8b", copyright_year=1995)), printing_id=2,
        printing_set_code="bbb", released_year=2010, route="look-alike-set-code")


def test_a_layout_mismatch_names_the_printings_layout() -> None:
    evidence = _ev("7", collector_layout="centred")
    assert decide(evidence, [_p(1, "aaa", "7", frame="2015")]) == _skip(
        "layout-mismatch", **_read(evidence), printing_id=1, route="number-only", printing_layout="modern")


def test_a_rival_counts_from_a_year_before_the_copyright_to_two_after_it() -> None:
    match = _p(1, "aaa", "14")
    for rival_year, rival in ((2008, False), (2009, True), (2012, True), (2013, False)):
        sets = {**SETS, "rrr": _set("rrr", rival_year)}
        result = decide(_ev("14", copyright_year=2010), [match, _p(2, "rrr", "146")], sets)
        if rival:
            assert result == _skip("possible-truncation", **_read(_ev("14", copyright_year=2010)), printing_id=1,
                                   route="number-only", candidate_ids=[1, 2]), rival_year
        else:
            assert result == Vote(CARD.id, JOIN_KEY_ID, 1, confidence=0.75), rival_year


def test_a_rival_of_another_layout_or_printed_total_is_no_rival() -> None:
    match = _p(1, "aaa", "14", frame="2015")
    assert decide(_ev("14", collector_layout="modern"), [match, _p(2, "ccc", "146", frame="2003")]) == Vote(
        CARD.id, JOIN_KEY_ID, 1, confidence=0.75)
    sets = {**SETS, "ccc": _set("ccc", 2011, total=280)}
    assert decide(_ev("14", collector_total=279), [match, _p(2, "ccc", "146")], sets) == Vote(
        CARD.id, JOIN_KEY_ID, 1, confidence=0.75)


def test_the_set_symbol_settles_rivals_of_other_sets_only() -> None:
    match, rival = _p(1, "aaa", "14"), _p(2, "bbb", "146")
    assert decide(_ev("14", symbol_phash=0), [match, rival]) == Vote(CARD.id, JOIN_KEY_ID, 1, confidence=0.75)
    same_set = _p(3, "aaa", "146")
    skip = decide(_ev("14", symbol_phash=0), [match, same_set])
    assert (skip.skip_reason, skip.detail["candidate_ids"]) == ("possible-truncation", [1, 3])


def test_a_number_that_may_be_a_piece_of_the_copyright_year_is_not_trusted_alone() -> None:
    evidence = _ev("199", copyright_year=1995)
    sets = {"old": _set("old", 1995), "new": _set("new", 1996)}
    assert decide(evidence, [_p(1, "old", "199"), _p(2, "new", "50")], sets) == _skip(
        "number-from-year", **_read(evidence), printing_id=1, route="number-only", candidate_ids=[1, 2])


def test_a_known_set_code_without_the_printing_says_why_it_casts_no_match_or_not() -> None:
    in_set = _ev("9", "aaa")
    assert decide(in_set, [_p(1, "aaa", "7")]) == _skip("number-mismatch", **_read(in_set), candidate_ids=[1])
    other = _ev("7", "ccc")
    assert decide(other, [_p(1, "aaa", "7")]) == _skip("number-in-other-set", **_read(other), candidate_ids=[1])
    lookalike = {**SETS, "b8b": _set("b8b", 2001), "bbb2": _set("bbb2", 2001)}
    twins = [_p(2, "bbb", "7"), _p(3, "b8b", "7")]
    unsure = _ev("7", "bbb2")
    assert decide(unsure, [_p(1, "aaa", "8")], lookalike) == _skip(
        "set-code-unconfirmed", **_read(unsure), symbol_reason="no-symbol-hash", symbol_distances={})
    absent = _ev("7", "bbb", symbol_phash=(1 << 40) - 1)
    assert decide(absent, [_p(1, "aaa", "8")]) == Vote(CARD.id, JOIN_KEY_ID, None, is_no_match=True, confidence=0.6)
    both = {**lookalike, "8bb": _set("8bb", 2001)}
    ambiguous = _ev("7", "8bb")
    assert decide(ambiguous, twins, both) == _skip("ambiguous", **_read(ambiguous), route="look-alike-set-code",
                                                   candidate_ids=[2, 3])


def test_a_garbled_set_code_one_edit_off_three_letters_or_two_off_longer_ones() -> None:
    one = [_p(1, "aaa", "7")]
    assert isinstance(decide(_ev("7", "aqq"), one), Abstention), "two edits from a three-letter code"
    assert decide(_ev("7", "aqa"), one) == Vote(CARD.id, JOIN_KEY_ID, 1, confidence=0.75)
    four = [_p(1, "dddd", "7")]
    assert decide(_ev("7", "dqqd"), four) == Vote(CARD.id, JOIN_KEY_ID, 1, confidence=0.75)
    far = _ev("7", "qqqd")
    assert decide(far, four) == _skip("unknown-set-code", **_read(far), candidate_ids=[1])


def test_the_ambiguous_skips_list_the_printings_and_the_symbol_reading() -> None:
    twins = [_p(1, "aaa", "7"), _p(2, "aaa", "7")]
    both = _ev("7", "aaa")
    assert decide(both, twins) == _skip("ambiguous", **_read(both), route="set-and-number", candidate_ids=[1, 2])
    missing = _ev("8")
    assert decide(missing, twins) == _skip("number-not-found", **_read(missing), candidate_ids=[1, 2])
    tie = _ev("7")
    assert decide(tie, [_p(1, "aaa", "7"), _p(2, "ccc", "7")]) == _skip(
        "ambiguous", **_read(tie), route="symbol-tie-break", candidate_ids=[1, 2], symbol_reason="no-symbol-hash",
        symbol_distances={})


def test_a_year_that_contradicts_a_match_its_total_vouches_for_was_misread() -> None:
    """"© 2000" read for "© 2008" on blurred type, over "334/344" of a 2008 set whose printed total is 344: the
    number and total name the printing, so it gets the vote; the year still stops a match whose total was not read
    or differs, and a rival with the same number and total leaves it to a person. Breakage caught: the total
    ignored (the misread year stops the vote), or a total that is not the set's taken to vouch."""
    sets = {"hax": _set("hax", 2008, total=344), "old": _set("old", 1999, total=344)}
    one = _p(1, "hax", "334")
    misread = _ev("334", collector_total=344, copyright_year=2000, collector_layout="legal-number")
    assert isinstance(decide(misread, [one], sets), Vote)
    other_total = _ev("334", collector_total=350, copyright_year=2000)
    assert decide(other_total, [one], sets).skip_reason == "copyright-year-mismatch"
    no_total = _ev("334", copyright_year=2000)
    assert decide(no_total, [one], sets).skip_reason == "copyright-year-mismatch"
    rival = _p(2, "old", "334")  # the same number and total in a set the year fits: a person decides
    assert decide(misread, [one, rival], sets).skip_reason == "ambiguous"


def test_the_total_read_picks_the_one_printing_of_that_number_whose_set_prints_it() -> None:
    """"332/344" on a legal line of a name printed #332 in two sets, one of 344 cards and one of 335: the total read
    leaves one, which gets the vote before any symbol tie-break; without the total, or with a total both sets
    print, the symbol decides or a person does. Breakage caught: the number's printings never narrowed by the
    line (the symbol alone, here unread, leaves it ambiguous)."""
    sets = {"hax": _set("hax", 2008, total=344), "old": _set("old", 2007, total=335),
            "twin": _set("twin", 2009, total=344)}
    mine, other = _p(1, "hax", "332"), _p(2, "old", "332")
    voted = decide(_ev("332", collector_total=344), [mine, other], sets)
    assert isinstance(voted, Vote) and voted.printing_id == mine.id
    assert decide(_ev("332"), [mine, other], sets).skip_reason == "ambiguous"
    both = decide(_ev("332", collector_total=344), [mine, other, _p(3, "twin", "332")], sets)
    assert both.skip_reason == "ambiguous"
