"""Never a vote on half a number: a reading that may be a truncation of another printing's number, one whose
printing has a twin differing only by a suffix, or one whose digits may be the copyright year's, does not vote
unless a total, a set code or the set symbol singles its printing out (the join-key calculator's guard, and the
reader's confirmation that shares its rules)."""

from __future__ import annotations

from datetime import date

import pytest
from PIL import Image

from stage_e_dagster.domain import printed_lines
from stage_e_dagster.domain.calculators import fallback, join_key
from stage_e_dagster.domain.calculators.join_key import decide_join_key
from stage_e_dagster.domain.catalog import CardRef, ExpansionRef, PrintingRef
from stage_e_dagster.domain.decisions import Abstention, Vote
from stage_e_dagster.domain.evidence import fragments
from stage_e_dagster.domain.evidence.collector import read_collector
from stage_e_dagster.domain.evidence.model import Evidence
from stage_e_dagster.domain.evidence.parse import parse_collector
from stage_e_dagster.domain.evidence.read_catalog import ReadCatalog, resolve
from stage_e_dagster.domain.printed_lines import CENTRED, LEGAL_NUMBER, MODERN, NUMBERLESS, RARITY_FIRST

EXPANSIONS = {
    "ddd": ExpansionRef("ddd", date(2004, 6, 4), printed_total=306),  # 2003 frame: "27/306"
    "ttt": ExpansionRef("ttt", date(2007, 10, 12), printed_total=301),  # its basics: 270-301
    "m19": ExpansionRef("m19", date(2018, 7, 13), printed_total=280),
    "por": ExpansionRef("por", date(1997, 5, 1), printed_total=222),  # numberless (Portal, 1997)
    "7ed": ExpansionRef("7ed", date(2001, 4, 11), printed_total=350),  # centred, 1997 frame
}
SWAMP_27 = PrintingRef(1, "a", "Swamp", "ddd", "27", frame="2003")
SWAMP_270 = PrintingRef(2, "b", "Swamp", "ttt", "270", frame="2003")
SWAMP_271 = PrintingRef(3, "c", "Swamp", "ttt", "271", frame="2003")
SHOCK = PrintingRef(4, "d", "Shock", "m19", "261", frame="2015")
SHOCK_STAR = PrintingRef(5, "e", "Shock", "m19", "261★", frame="2015")
PLAINS_199 = PrintingRef(6, "f", "Plains", "por", "199", frame="1997")
PLAINS_332 = PrintingRef(7, "g", "Plains", "7ed", "332", frame="1997")


def decide(name: str, candidates: list[PrintingRef], **fields: object) -> Vote | Abstention:
    return decide_join_key(CardRef(9, name), Evidence(**fields), candidates, EXPANSIONS)  # type: ignore[arg-type]


def reason(result: Vote | Abstention) -> str:
    return "vote" if isinstance(result, Vote) else result.skip_reason


def test_a_truncated_read_does_not_vote_for_the_shorter_number() -> None:
    """"27" read for "270" on a basic land: another set's Swamp #27 is the only exact match."""
    swamps = [SWAMP_27, SWAMP_270, SWAMP_271]
    assert reason(decide("Swamp", swamps, collector_number="27")) == fragments.TRUNCATION
    # The printed total read with it singles Swamp #27 out: ttt's basics are numbered out of 301.
    voted = decide("Swamp", swamps, collector_number="27", collector_total=306)
    assert isinstance(voted, Vote) and voted.printing_id == SWAMP_27.id
    # A whole number is no piece of a shorter one.
    assert reason(decide("Swamp", swamps, collector_number="270", collector_total=301)) == "vote"


def test_a_lost_suffix_does_not_vote_for_the_unstarred_twin() -> None:
    """"261★/383" read as "261%/383", parsed without the star: the unstarred #261 of the same set matches."""
    shocks = [SHOCK, SHOCK_STAR]
    lost = decide("Shock", shocks, collector_number="261", collector_total=280, set_code="m19",
                  collector_layout=MODERN)
    assert reason(lost) == fragments.SUFFIX  # the set code and total name both twins: nothing tells them apart
    invented = decide("Shock", shocks, collector_number="★261", collector_total=280, set_code="m19")
    assert reason(invented) == fragments.SUFFIX
    assert reason(decide("Shock", [SHOCK], collector_number="261", collector_total=280, set_code="m19")) == "vote"


def test_a_number_from_the_copyright_year_does_not_vote() -> None:
    """A centred 1997-frame Plains, "™ & © 1993-2000 Wizards of the Coast, Inc. 332/350": its number lost, "199"
    read out of the year is Portal's Plains #199."""
    plains = [PLAINS_199, PLAINS_332]
    raw = "Illus. Anna Chen\n™ & © 1993-2000 Wizards of the Coast, Inc. 199"
    year = decide("Plains", plains, collector_number="199", collector_raw=raw)  # no year parsed: no era check
    assert reason(year) == fragments.YEAR
    # The same digits with a printed total read beside them are a number, not a year.
    counted = decide("Plains", plains, collector_number="199", collector_total=222, collector_raw=raw)
    assert isinstance(counted, Vote) and counted.printing_id == PLAINS_199.id


SEA_24 = PrintingRef(8, "h", "Sea Serpent", "7ed", "24", frame="1997")
SEA_24_STAR = PrintingRef(9, "i", "Sea Serpent", "7ed", "24★", frame="1997")


@pytest.mark.parametrize(("read", "star", "voted"), [
    ("24", False, SEA_24), ("24", True, SEA_24_STAR), ("★24", True, SEA_24_STAR), ("★24", False, SEA_24),
    ("24", None, None), ("★24", None, None),
])
def test_the_star_the_pixels_show_tells_a_star_twin_apart(read: str, star: bool | None,
                                                         voted: PrintingRef | None) -> None:
    """"24/350" and "24★/350" of a 1997-frame set: same set, total and year. The star seen (or not) before the
    slash (`star_mark`) decides, whatever OCR read; when the pixels cannot tell, the twin stays a rival.
    Breakage caught: the star evidence ignored (both twins stay rivals), or trusted over its own absence."""
    result = decide("Sea Serpent", [SEA_24, SEA_24_STAR], collector_number=read, collector_total=350,
                    collector_layout=CENTRED, collector_star=star)
    if voted is None:
        assert reason(result) == fragments.SUFFIX
    else:
        assert isinstance(result, Vote) and result.printing_id == voted.id


BEACON_30A = PrintingRef(10, "j", "Molten Beacon", "7ed", "30a", frame="1997")
BEACON_30B = PrintingRef(11, "k", "Molten Beacon", "7ed", "30b", frame="1997")
BEACON_30 = PrintingRef(12, "l", "Molten Beacon", "7ed", "30", frame="1997")
BEACON_30P = PrintingRef(13, "m", "Molten Beacon", "7ed", "30p", frame="1997")


@pytest.mark.parametrize(("read", "height", "twins", "voted"), [
    ("30a", "x-height", [BEACON_30A, BEACON_30B], BEACON_30A),
    ("30b", "full", [BEACON_30A, BEACON_30B], BEACON_30B),
    ("30", "full", [BEACON_30, BEACON_30A], BEACON_30),
    ("30a", "x-height", [BEACON_30, BEACON_30A], BEACON_30A),
    ("30a", None, [BEACON_30A, BEACON_30B], None),  # the pixels could not tell
    ("30a", "full", [BEACON_30A, BEACON_30B], None),  # they contradict the reading: the twin stays a rival
    ("30p", "full", [BEACON_30P, BEACON_30A], None),  # a descender's height is no reading's: nothing told
])
def test_the_height_before_the_slash_tells_letter_twins_apart(read: str, height: str | None,
                                                             twins: list[PrintingRef],
                                                             voted: PrintingRef | None) -> None:
    """"30a/350" and "30b/350" (or "30" and "30a") of one set: same total and year. A lower-case "a" stands at
    x-height before the slash, a "b" or a digit at full height (`star_mark.end_height`): when the pixels agree with
    the reading, the twin is no rival. Breakage caught: the height ignored (both twins rivals), or trusted when it
    contradicts the reading."""
    result = decide("Molten Beacon", twins, collector_number=read, collector_total=350,
                    collector_layout=CENTRED, collector_end_height=height)
    if voted is None:
        assert reason(result) == fragments.SUFFIX
    else:
        assert isinstance(result, Vote) and result.printing_id == voted.id


def test_a_misread_total_rules_out_no_twin() -> None:
    """"20★/143" read as "20/443": the total fits neither twin, so it was misread, and the unstarred twin the number
    names is still doubted. Breakage caught: the total filtering rivals it does not fit the match for (a vote for the
    unstarred twin)."""
    result = decide("Sea Serpent", [SEA_24, SEA_24_STAR], collector_number="24", collector_total=950,
                    collector_layout=CENTRED)
    assert reason(result) == fragments.SUFFIX


@pytest.mark.parametrize("case", ["truncation", "suffix", "year"])
def test_each_case_votes_wrongly_without_the_guard(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The guard is what stops each of them: without it each casts the wrong vote the issue saw."""
    monkeypatch.setattr(join_key, "doubt", lambda *args, **kwargs: None)
    if case == "truncation":
        result = decide("Swamp", [SWAMP_27, SWAMP_270], collector_number="27")
    elif case == "suffix":
        result = decide("Shock", [SHOCK, SHOCK_STAR], collector_number="261", collector_total=280, set_code="m19")
    else:
        result = decide("Plains", [PLAINS_199, PLAINS_332], collector_number="199",
                        collector_raw="© 1993-2000 Wizards of the Coast, Inc. 199")
    assert isinstance(result, Vote)


def test_a_legal_line_number_is_no_modern_printings() -> None:
    """A number read at the end of a legal line belongs to a frame that prints no set code."""
    result = decide("Shock", [SHOCK], collector_number="261", collector_layout=LEGAL_NUMBER)
    assert reason(result) == "layout-mismatch"
    assert reason(decide("Plains", [PLAINS_332], collector_number="332", collector_total=350,
                         collector_layout=CENTRED)) == "vote"


@pytest.mark.parametrize(
    ("read", "other", "kind"),
    [("27", "270", fragments.TRUNCATION), ("70", "270", fragments.TRUNCATION), ("12", "a12", fragments.TRUNCATION),
     ("261", "261*", fragments.SUFFIX), ("261*", "261", fragments.SUFFIX), ("12a", "12b", fragments.SUFFIX),
     ("27", "27", None), ("27", "72", None), ("270", "27", None), ("1", "", None), ("a12", "12", None)],
)
def test_rivalry(read: str, other: str, kind: str | None) -> None:
    assert fragments.rivalry(read, other) == kind


def test_from_year() -> None:
    assert fragments.from_year("199", ["© 1993-2000 Wizards"])
    assert fragments.from_year("20", [], 2012) and fragments.from_year("2012", [], 2012)
    assert not fragments.from_year("9", ["© 1999"])  # one digit is too little to blame on the year
    assert not fragments.from_year("174", ["™ & © 2012 Wizards of the Coast 174/274"], 2012)


CATALOG = ReadCatalog.build(
    [("Swamp", "ddd", "27"), ("Swamp", "ttt", "270"), ("Swamp", "ttt", "271"), ("Shock", "m19", "261"),
     ("Shock", "m19", "261★"), ("Island", "ttt", "275"), ("Island", "ttt", "276")],
    totals={"ddd": 306, "ttt": 301, "m19": 280}, codeless={"ddd", "ttt"},
    layouts={"ddd": [LEGAL_NUMBER], "ttt": [LEGAL_NUMBER], "m19": [MODERN], "por": [NUMBERLESS]},
)


@pytest.mark.parametrize(
    ("text", "name", "confirmed"),
    [
        ("27", "Swamp", False),  # it may be 270's first digits
        ("27/306", "Swamp", True),  # the total rules ttt out
        ("271/301", "Swamp", False),  # 270 is one digit away in the same set: a second read must agree
        ("261/280 R\nM19 • EN", "Shock", False),  # the starred twin in the same set
        ("275/301", "Island", False),
    ],
)
def test_the_reader_confirms_no_half_number(text: str, name: str, confirmed: bool) -> None:
    assert resolve(parse_collector(text), CATALOG.set_codes, CATALOG, name).confirmed is confirmed


def test_expected_layouts_come_from_the_names_printings() -> None:
    assert CATALOG.expected_layouts("Swamp") == {LEGAL_NUMBER}
    assert CATALOG.expected_layouts("Shock") == {MODERN}
    assert CATALOG.expected_layouts("Nobody") is None


@pytest.mark.parametrize(
    ("read", "printed", "fits"),
    [(MODERN, RARITY_FIRST, True), (RARITY_FIRST, MODERN, True), (MODERN, LEGAL_NUMBER, False),
     (LEGAL_NUMBER, CENTRED, True), (CENTRED, LEGAL_NUMBER, False), (LEGAL_NUMBER, MODERN, False),
     (CENTRED, CENTRED, True), (None, MODERN, True), (CENTRED, None, True), (NUMBERLESS, NUMBERLESS, True)],
)
def test_which_layouts_a_reading_fits(read: str | None, printed: str | None, fits: bool) -> None:
    assert printed_lines.fits(read, printed) is fits


def test_the_fallback_never_picks_a_frame_that_prints_its_number_elsewhere() -> None:
    """A number read on a centred legal line, the join key's number-only vote too weak to stop the fallback: the
    border and symbol alone would pick the same name's modern printing; the layout rules it out."""
    centred = PrintingRef(11, "h", "Vast Reliquary", "7ed", "24", frame="1997", border_color="black")
    modern = PrintingRef(12, "i", "Vast Reliquary", "m19", "57", frame="2015", border_color="black")
    evidence = Evidence(collector_number="24", collector_total=350, collector_layout=CENTRED, border_color="black")
    kept = fallback.layout_check(CardRef(9, "Vast Reliquary"), evidence, [centred, modern], EXPANSIONS)
    assert kept == {centred.id}
    assert fallback.layout_check(CardRef(9, "x"), Evidence(collector_number="24"), [centred, modern],
                                 EXPANSIONS) is None  # no number read: no reading


def test_an_unconfirmed_read_stands_for_the_names_printing_a_second_read_must_agree_on() -> None:
    """"L 0395" read as "10395": its first reading is 10/395, but the name's printing is 395, one digit from the
    set's other basic lands. Unconfirmed, the reading stands for 395, so that two agreeing reads agree on it."""
    lands = ReadCatalog.build([("Mountain", "gjp", "394"), ("Mountain", "gjp", "395"), ("Mountain", "gjp", "396")],
                              totals={"gjp": 300}, layouts={"gjp": [RARITY_FIRST]})
    found = resolve(parse_collector("10395\nGJP • EN"), lands.set_codes, lands, "Mountain")
    assert (found.number, found.set_code, found.confirmed) == ("395", "gjp", False)


class Scripted:
    """An engine that reads the same text of every image and counts its reads."""

    name = "scripted"

    def __init__(self, text: str) -> None:
        self.text, self.reads = text, 0

    def read(self, image: Image.Image, psm: int = 6, whitelist: str | None = None) -> str:
        self.reads += 1
        return self.text


UNTOLD = ReadCatalog.build([("Swamp", "ttt", "270"), ("Swamp", "ttt", "271")], codeless={"ttt"},
                            layouts={"ttt": [LEGAL_NUMBER]})
LANDS = ReadCatalog.build([("Mountain", "ifx", "332"), ("Mountain", "ifx", "333")], totals={"ifx": 334},
                          layouts={"ifx": [MODERN]})


@pytest.mark.parametrize(
    ("catalog", "text", "name", "settled"),
    [
        (CATALOG, "271/301", "Swamp", True),  # the set's total read: only 270 was in doubt
        (CATALOG, "271", "Swamp", False),  # no total: the era check still has a say
        (UNTOLD, "271/301", "Swamp", False),  # a total the catalogue cannot check: nor does it settle anything
        (CATALOG, "275/301", "Island", True),
        (LANDS, "332/334 L\nIFX • EN", "Mountain", True),  # the set code read
    ],
)
def test_two_agreeing_reads_settle_a_printing_whose_only_doubt_was_its_neighbour(
    catalog: ReadCatalog, text: str, name: str, settled: bool
) -> None:
    """A basic land's number is one digit from the next land's in its set: one read cannot confirm it, two that
    agree can, and then the printing is as settled as a confirmed reading with its total or set code, so the legal
    line (whose year only guards a printing chosen by its number alone) is not read a third time."""
    engine = Scripted(text)
    reading = read_collector(Image.new("RGB", (700, 70), "white"), set(), engine, catalog=catalog, name=name)
    assert (reading.confirmed, reading.accepted, engine.reads) == (False, True, 2)
    assert reading.settled is settled
