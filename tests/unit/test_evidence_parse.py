"""Table-driven tests of collector-line and legal-line text parsing and set-code snapping (no OCR, no images)."""

from __future__ import annotations

import pytest

from stage_e_dagster.domain.evidence.collector import CollectorReading, read_text
from stage_e_dagster.domain.evidence.legal_text import has_proxy_marker, parse_copyright_year
from stage_e_dagster.domain.evidence.parse import is_credit_word, parse_collector, split_digit_run
from stage_e_dagster.domain.evidence.read_catalog import ReadCatalog
from stage_e_dagster.domain.evidence.set_codes import fold, levenshtein, snap_first, snap_set_code
from stage_e_dagster.domain.printed_lines import MODERN

KNOWN = {"m20", "otj", "fdn", "neo", "2xm", "abc", "ab0", "s02", "s42"}


@pytest.mark.parametrize(
    ("text", "number", "total", "rarity", "token", "language"),
    [
        ("123/280 R\nM20 • EN", "123", 280, "R", "M20", "EN"),
        ("123/280 R\nM20 * EN\n", "123", 280, "R", "M20", "EN"),
        ("★12/280", "★12", 280, None, None, None),
        ("*12/280 C\nOTJ - EN", "★12", 280, "C", "OTJ", "EN"),
        ("7a", "7a", None, None, None, None),
        ("7a/280", "7a", 280, None, None, None),
        ("12b/306\n", "12b", 306, None, None, None),
        ("0045/0280 U\nNEO • EN", "45", 280, "U", "NEO", "EN"),
        ("280/12", "280", 12, None, None, None),  # the number is the one before the slash
        ("12/280 M\nM20EN", "12", 280, "M", "M20", "EN"),  # glued language marker
        ("12/280 M\nM20-EN", "12", 280, "M", "M20", "EN"),
        ("45I280 U\nFDN EN", "45", 280, "U", "FDN", "EN"),  # slash misread as I
        ("\n\n53/279C\nEMU + EN -\n", "53", 279, "C", "EMU", "EN"),  # rarity glued to the total
        ("garbage ~~\n17/300 R\n2XM • EN", "17", 300, "R", "2XM", "EN"),
        ("", None, None, None, None, None),
        ("~~ -- ~~", None, None, None, None, None),
        ("M20 • EN", None, None, None, "M20", "EN"),  # number line lost: the set code still reads
    ],
)
def test_parse_collector(
    text: str, number: str | None, total: int | None, rarity: str | None, token: str | None, language: str | None
) -> None:
    parsed = parse_collector(text)
    assert parsed.number == number
    assert parsed.total == total
    assert parsed.rarity == rarity
    assert parsed.set_token == token
    assert parsed.language == language


def test_print_run_total_is_never_the_number() -> None:
    for text in ("123/280", "123 / 280 R", "1/999\nM20 • EN", "999/1"):
        parsed = parse_collector(text)
        assert parsed.number == text.split("/")[0].strip()
        assert parsed.total == int(text.split("/")[1].split()[0])


@pytest.mark.parametrize(
    ("raw", "known", "snapped"),
    [
        ("M20", KNOWN, "m20"),
        ("m20", KNOWN, "m20"),
        ("OT]", KNOWN, "otj"),  # ] -> J
        ("0TJ", KNOWN, "otj"),  # 0 -> O
        ("FON", KNOWN, "fdn"),  # one substitution, one candidate
        ("FDN", KNOWN, "fdn"),
        ("NE0", KNOWN, "neo"),
        ("ZXM", KNOWN, "2xm"),  # 2 <-> Z
        ("502", KNOWN, "s02"),  # 5 -> S: the only code equal after folding
        ("S02", KNOWN, "s02"),  # exact beats the one-edit twin s42
        ("S42", KNOWN, "s42"),
        ("ABO", KNOWN, "ab0"),  # folds onto ab0 only (abc is an edit away, ab0 none)
        ("ABC", KNOWN, "abc"),
        ("S72", KNOWN, None),  # one edit from both s02 and s42: ambiguous, not snapped
        ("ABX", KNOWN, None),  # one edit from abc and ab0
        ("QQQQ", KNOWN, None),
        ("", KNOWN, None),
        ("FON", {"fdn", "fon"}, "fon"),  # exact match wins
        ("FQN", {"fdn", "fon"}, "fon"),  # Q folds onto O: equal to fon after folding
        ("FXN", {"fdn", "fon"}, None),  # within one edit of two codes
        ("M20", set(), None),
    ],
)
def test_snap_set_code(raw: str, known: set[str], snapped: str | None) -> None:
    assert snap_set_code(raw, known) == snapped


def test_snap_first_prefers_a_snapping_token_and_reports_a_lettered_raw_token_otherwise() -> None:
    assert snap_first(["M20", "M20EN"], KNOWN) == ("M20", "m20")
    assert snap_first(["XYZW", "FON"], KNOWN) == ("FON", "fdn")
    assert snap_first(["QQQ"], KNOWN) == ("QQQ", None)
    assert snap_first(["999"], KNOWN) == (None, None)  # a digits-only token never becomes a set code
    assert snap_first([], KNOWN) == (None, None)


def test_fold_and_levenshtein() -> None:
    assert fold("OT]") == fold("otj") == "OTJ"
    assert fold("s02") == fold("502")
    assert levenshtein("FON", "FDN") == 1
    assert levenshtein("abc", "abc") == 0
    assert levenshtein("abcd", "a", limit=1) == 2


@pytest.mark.parametrize(
    ("text", "set_code", "set_code_raw", "accepted"),
    [
        ("123/280 R\nOT] • EN", "otj", "OT]", True),
        ("123/280 R\nFON • EN", "fdn", "FON", True),
        ("123/280 R\nS72 • EN", "s72", "S72", False),  # ambiguous: kept raw (lower case), escalation wanted
        ("123/280", None, None, True),  # pre-2015 frame: number only, accepted
        ("9999/280 R\nM20 • EN", "m20", "M20", False),  # implausible number for its total
    ],
)
def test_reading_snaps_and_accepts(text: str, set_code: str | None, set_code_raw: str | None, accepted: bool) -> None:
    reading: CollectorReading = read_text(text, KNOWN, 1)
    assert reading.set_code == set_code
    assert reading.set_code_raw == set_code_raw
    assert reading.accepted is accepted


@pytest.mark.parametrize(
    ("text", "year", "marker"),
    [
        ("Illus. Anna Chen\n™ & © 2019 Wizards of the Coast", 2019, False),
        ("NOT FOR SALE © 2016 Wizards of the Coast", 2016, True),
        ("PROXY © 2003 Wizards", 2003, True),
        ("Playtest card (c) 2021", 2021, True),
        ("Illus. 1990 Artist\nCopyright 1997 Wizards", 1997, False),  # anchored year wins over a bare one
        ("TM & @ 2024 Wizards of the Coast", 2024, False),  # © misread as @
        ("© 1850 Wizards", None, False),  # out of range
        ("© 2031 Wizards", None, False),  # beyond next year
        ("Wizards of the Coast 2027", 2027, False),  # bare year, next year allowed
        ("", None, False),
    ],
)
def test_legal_line(text: str, year: int | None, marker: bool) -> None:
    assert parse_copyright_year(text, current_year=2026) == year
    assert has_proxy_marker(text) is marker


# Miss classes seen on hard scans, as the OCR text they produce.
@pytest.mark.parametrize("word", ["Illus", "lllus", "Iilus", "llus", "lus", "hilus", "Hus", "Hws", "[llus", "tllus",
                                  "filus", "Nlus", "Itlus", "IHus", "Dlus"])
def test_artist_credit_words_of_old_frames_are_never_set_codes(word: str) -> None:
    parsed = parse_collector(f"42/280\n{word}. Anna Chen\n")
    assert (parsed.number, parsed.total, parsed.set_tokens) == ("42", 280, ())
    reading = read_text(f"42/280\n{word}. Anna Chen\n", KNOWN | {"ius", "hus", "lus"}, 1)
    assert reading.set_code is None and reading.accepted  # a number with no set code is accepted as such


@pytest.mark.parametrize(
    ("text", "number", "total", "token"),
    [
        ("1297280 R\nM20 • EN 7 Jonas Abbott", "129", 280, "M20"),  # slash read as 7, brush read as 7
        ("1731344C\nHAX - EN 7 Farid", "173", 344, "HAX"),
        ("71382C\nFFJ « EN Priya Moreau", "7", 382, "FFJ"),  # slash read as 1
        ("2471391C\nB78-EN", "247", 391, "B78"),
        ("12/280 R\nABC • EN 7 Jonas Abbott", "12", 280, "ABC"),  # the name is never the set code
        ("161/320 U\nFD6 * EN & Bram Santos", "161", 320, "FD6"),
    ],
)
def test_slash_read_as_a_digit_and_the_brush_read_as_a_digit(text: str, number: str, total: int, token: str) -> None:
    parsed = parse_collector(text)
    assert (parsed.number, parsed.total, parsed.set_token) == (number, total, token)
    if number != "7":
        assert "7" not in [n for n, _ in parsed.number_options]  # never the brush's 7


@pytest.mark.parametrize(
    "text",
    [
        "mee )\nM1+ 50 Wen Wantivid",  # first line lost: the brush's digit is not the number
        "ABC • EN 7 Jonas Abbott",
        "XL9 - ENZ Wen Doreey",  # EN glued to the brush
        "",
        "an Oe we aw we a Ae. ee oo\n: a+ Ape eet Gand",  # garbage from a tiny blurred scan
    ],
)
def test_no_number_from_the_credit_line_or_garbage(text: str) -> None:
    assert parse_collector(text).number is None


def test_the_set_code_stops_at_the_language_marker_and_the_brush() -> None:
    assert parse_collector("12/280 R\nXL9 - ENZ Wen Doreey").set_tokens == ("XL9",)
    assert parse_collector("12/280 R\nFFJ - EN/ Priya Moreau").set_tokens == ("FFJ",)
    assert parse_collector("0123 R M20 • EN").set_tokens == ("M20",)  # both lines merged
    assert parse_collector("0123 R M20 • EN").number == "123"


def test_split_digit_run_prefers_a_slash_read_as_7_or_1_and_a_number_within_its_total() -> None:
    assert split_digit_run("1297280")[0] == ("129", 280)
    assert split_digit_run("71382")[0] == ("7", 382)
    assert ("12", 7280) in split_digit_run("1297280")  # kept for the catalogue to rule out
    assert all(total >= 10 for _, total in split_digit_run("10000"))  # a total never starts with 0
    assert split_digit_run("10395")[-1] == ("395", None)  # "R 0395" with the rarity letter read as a 1
    assert ("47", 153) in split_digit_run("4711530")  # "47/153 C" with the slash a 1 and the C a 0


@pytest.mark.parametrize(
    ("text", "first", "also"),
    [
        ("%319/361 U\nAGY « EN", "★319", "319"),  # a small star read as %
        ("35 1/363", "351", "1"),  # a digit group split off by a space, within its total
        ("40/320R\nFDé6 « EN", "40", "★40"),
    ],
)
def test_number_options(text: str, first: str, also: str) -> None:
    parsed = parse_collector(text)
    assert parsed.number == first
    assert also in [number for number, _ in parsed.number_options]


@pytest.mark.parametrize(
    ("line", "code"),
    [
        ("FDé6 « EN ¢ Hiro M", "fd6"),  # an accented letter is a glyph OCR could not read: one wrong character
        ("FDé + EN", "fd6"),
        ("B/78 < EN", "b78"),  # a slash inside a code is a misread glyph
        ("B/8 « EN", "b78"),
        ("FFJ - ENS/ Forx Okator", "ffj"),  # a slash at a token's edge is the paintbrush
    ],
)
def test_misread_glyphs_inside_set_codes_still_snap(line: str, code: str) -> None:
    reading = read_text(f"40/320 R\n{line}", {"fd6", "b78", "ffj", "m20"}, 1)
    assert reading.set_code == code and reading.snapped


@pytest.mark.parametrize("word", ["Jonas", "Wen", "Farid", "lllus", "Hus", "llus"])
def test_is_credit_word(word: str) -> None:
    assert is_credit_word(word)


@pytest.mark.parametrize("code", ["M20", "FFJ", "XL9", "S02", "HUS", "NEO", "OT]", "2XM"])
def test_upper_case_codes_are_not_credit_words(code: str) -> None:
    assert not is_credit_word(code)


@pytest.mark.parametrize(
    ("text", "number", "total", "rarity", "layout"),
    [
        # The 2003 frame: the credit, then the legal line ending in the number.
        ("✎ Anna Chen\n™ & © 2012 Wizards of the Coast 174/274", "174", 274, None, "legal-number"),
        ("7 Quinn Fontaine\n™ & © 2005 Wizards of the Coast 3/293", "3", 293, None, "legal-number"),  # the brush, 7
        ("Illus. A\n™ & © 1993-2003 Wizards of the Coast, Inc. 316★/350", "★316", 350, None, "legal-number"),
        ("& © 2006 Wizards of the Coast, inc. 205#/269", "★205", 269, None, "legal-number"),  # a small star as #
        ("& © 2006 Wizards of the Coant 117€/344", "★117", 344, None, "legal-number"),  # a small star as €
        ("™ & © 2010 Wizards of the Coast LLC 12/249", "12", 249, None, "legal-number"),
        ("=8 © 2007 Waseds o the Cunes 377/391", "377", 391, None, "legal-number"),  # the year anchors a mangled line
        # The 1997 frame's centred legal line (centred is geometry: the text reads as a legal-line number).
        ("Illus. Omar Garza\n© 2000 Wizards of the Coast, Inc. 2/238", "2", 238, None, "legal-number"),
        ("PROXY © 2005 Wizards 4/293", "4", 293, None, "legal-number"),
        ("© 2003 Wizards of the Coast Inc 55/30.3", "55", 303, None, "legal-number"),  # a speck inside the total
        ("PROKVG 2005 Wands 32:363", "32", 363, None, "legal-number"),  # the slash read as a colon
        # Rarity first, four digits, zeros read as letters or lost.
        ("C 0172\nDSK • EN ✎ Anna", "172", None, "C", "rarity-first"),
        ("ROO70\nXL9 + EN 7 Elena", "70", None, "R", "rarity-first"),
        ("L0272\nDSK • EN", "272", None, "L", "rarity-first"),
        ("C Q58\nXL9 • EN", "58", None, "C", "rarity-first"),
        ("co0281\nXL9* ENZ On", "281", None, "C", "rarity-first"),  # the zero read twice, once as a letter
        ("171/274 C\nBFZ • EN ✎ Anna", "171", 274, "C", "modern"),
        ("078/221 M\nM19 ★ EN", "78", 221, "M", "modern"),  # zero-padded, a premium print's star separator
    ],
)
def test_every_layouts_number(text: str, number: str, total: int | None, rarity: str | None, layout: str) -> None:
    parsed = parse_collector(text)
    assert (parsed.number, parsed.total, parsed.rarity, parsed.layout) == (number, total, rarity, layout)
    assert parsed.set_tokens == () or layout in ("modern", "rarity-first")  # a legal line holds no set code


@pytest.mark.parametrize(
    "text",
    [
        "™ & © 1993/2000 Wizards of the Coast, Inc.",  # a copyright range read with a slash is no number
        "™ & © 1993-2000 Wizards of the Coast, Inc.",
        "199 3-2000 Wizards of the Coast",  # a year split by OCR: its pieces are no number either
        "Illus. Kaito Garza\n© 1995 Wizards of the Coast, Inc.",  # numberless: the year is not a set code
        "M20 • EN",  # a set code is no rarity-first number
        "Sue Ave Bbund\n© 199 Wime ée of the Qe",  # digits just after the copyright sign are a year misread
        "VRERY © 9908 Wanate",
        "© 200 S of o Lonst, s",
    ],
)
def test_a_year_or_a_set_code_is_never_the_number(text: str) -> None:
    parsed = parse_collector(text)
    assert parsed.number is None
    assert not any(token.isdigit() for token in parsed.set_tokens)


def test_the_number_after_a_legal_lines_year_is_still_read() -> None:
    """The copyright sign rules out only the digits just after it."""
    assert parse_collector("© 1999 Wizards of the Coast, Inc. 123").number == "123"
    assert parse_collector("™ & © 2012 Wizards of the Coast 174/274").number == "174"


def test_a_copyright_range_stands_for_its_last_year() -> None:
    assert parse_copyright_year("™ & © 1993-2003 Wizards of the Coast, Inc. 316/350", 2026) == 2003
    assert parse_copyright_year("© 1995 Wizards of the Coast, Inc.", 2026) == 1995
    assert parse_copyright_year("© 1993-2099 Wizards", 2026) == 1993  # a range into the future is no year


def test_a_total_shorter_than_its_number_is_dropped_for_the_catalogue_to_confirm_the_number_alone() -> None:
    """Blurred small type loses a digit of the total: "266/32 M" for "266/302 M". The number with a total of fewer
    digits is offered without it, last; a total as long as the number is kept (it may be another set's).
    Breakage caught: no cut option (the number of the name's printing never confirmed)."""
    catalog = ReadCatalog.build([("Wyrmrest's Insight", "yzc", "266")], totals={"yzc": 302},
                                layouts={"yzc": {MODERN}})
    assert parse_collector("266/32 M\nYZC • EN").number_options[-2:] == (("266", None), ("★266", None))
    assert ("266", None) not in parse_collector("266/310 M\nYZC • EN").number_options
    assert ("34174", None) not in parse_collector("34 174/274").number_options  # no number has five digits
    cut = read_text("266/32 M\nYZC • EN", {"yzc"}, 1, catalog, "Wyrmrest's Insight")
    assert (cut.number, cut.confirmed, cut.total) == ("266", True, None)
    wrong_total = read_text("266/310 M\nYZC • EN", {"yzc"}, 1, catalog, "Wyrmrest's Insight")
    assert not wrong_total.confirmed  # a whole total that is not the set's: another set's card


def test_a_rarity_letter_read_as_a_digit_after_the_total_leaves_the_total_to_confirm() -> None:
    """"113/320 C" with the letter joined to the total is read "113/3200": the total without its last digit is an
    option, after the total as read, so the catalogue confirms the number with the set's total; a total as long as
    the number gets none (it may be whole). Breakage caught: no such option (the printing never confirmed)."""
    catalog = ReadCatalog.build([("Lunar Oracle", "fd6", "113")], totals={"fd6": 320}, layouts={"fd6": {MODERN}})
    options = parse_collector("113/3200\nFO6·ENJ Maco k").number_options
    assert options[0] == ("113", 3200) and ("113", 320) in options
    assert ("1993", 210) not in parse_collector("1993/2100\nM20 • EN").number_options
    read = read_text("113/3200\nFO6·ENJ Maco k", {"fd6"}, 1, catalog, "Lunar Oracle")
    assert (read.number, read.total, read.confirmed) == ("113", 320, True)
