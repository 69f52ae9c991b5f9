"""Table-driven tests of collector-line and legal-line text parsing and set-code snapping (no OCR, no images)."""

from __future__ import annotations

import pytest

from stage_e_dagster.domain.evidence.collector import CollectorReading, _reading
from stage_e_dagster.domain.evidence.parse import (
    fold,
    has_proxy_marker,
    levenshtein,
    parse_collector,
    parse_copyright_year,
    snap_first,
    snap_set_code,
)

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
    reading: CollectorReading = _reading(text, KNOWN, 1)
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
