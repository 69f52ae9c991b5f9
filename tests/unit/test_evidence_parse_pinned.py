"""The collector-line parser pinned where it decides: whole parses of each layout and of the misreads it reads
through (a digit split off by a space, a letter prefix that is a digit, a rarity letter glued to the number, a year
range read with a slash, an ampersand for an 8, a carriage return), every reading a run of digits may be, and its
helpers at their edges (edit distances and their cap, the credit words, a language marker glued to the paintbrush,
the copyright years from 1993 to the year after the current one, ranges ending there, reads that saw only an
artist credit)."""

from __future__ import annotations

import pytest

from stage_e_dagster.domain.evidence.legal_text import credit_only, parse_copyright_year
from stage_e_dagster.domain.evidence.parse import (
    CollectorParse,
    _abbreviations,
    _language_of,
    is_credit_word,
    legal_end,
    normalise_collector_number,
    parse_collector,
    split_digit_run,
)
from stage_e_dagster.domain.evidence.set_codes import has_letter, levenshtein, snap_set_code

COLLECTOR_CASES = [
    (
        "I23/280 R\nM20 • EN",
        CollectorParse(
            number="123",
            total=280,
            rarity="R",
            set_tokens=("M20",),
            language="EN",
            has_second_line=True,
            lines=("I23/280 R", "M20 • EN"),
            number_options=(("123", 280), ("I23", 280), ("23", 280)),
            layout="modern",
        ),
    ),
    (
        "★A12/280\nM20 • EN",
        CollectorParse(
            number="★A12",
            total=280,
            rarity=None,
            set_tokens=("M20",),
            language="EN",
            has_second_line=True,
            lines=("★A12/280", "M20 • EN"),
            number_options=(("★A12", 280), ("★12", 280)),
            layout="modern",
        ),
    ),
    (
        "35 1/363 R\nM20 • EN",
        CollectorParse(
            number="351",
            total=363,
            rarity="R",
            set_tokens=("M20",),
            language="EN",
            has_second_line=True,
            lines=("35 1/363 R", "M20 • EN"),
            number_options=(("351", 363), ("1", 363), ("★1", 363)),
            layout="modern",
        ),
    ),
    (
        "35 1/300 R\nM20 • EN",
        CollectorParse(
            number="1",
            total=300,
            rarity="R",
            set_tokens=("M20",),
            language="EN",
            has_second_line=True,
            lines=("35 1/300 R", "M20 • EN"),
            number_options=(("1", 300), ("351", 300), ("★1", 300)),
            layout="modern",
        ),
    ),
    (
        "36 3/363 R\nM20 • EN",
        CollectorParse(
            number="363",
            total=363,
            rarity="R",
            set_tokens=("M20",),
            language="EN",
            has_second_line=True,
            lines=("36 3/363 R", "M20 • EN"),
            number_options=(("363", 363), ("3", 363), ("★3", 363)),
            layout="modern",
        ),
    ),
    (
        "35 1a/363\nM20 • EN",
        CollectorParse(
            number="1a",
            total=363,
            rarity=None,
            set_tokens=("M20",),
            language="EN",
            has_second_line=True,
            lines=("35 1a/363", "M20 • EN"),
            number_options=(("1a", 363), ("351a", 363), ("★1a", 363)),
            layout="modern",
        ),
    ),
    (
        "12C/280\nM20 • EN",
        CollectorParse(
            number="12c",
            total=280,
            rarity=None,
            set_tokens=("M20",),
            language="EN",
            has_second_line=True,
            lines=("12C/280", "M20 • EN"),
            number_options=(("12c", 280), ("★12c", 280)),
            layout="modern",
        ),
    ),
    (
        "12R\nM20 • EN",
        CollectorParse(
            number="12",
            total=None,
            rarity="R",
            set_tokens=("M20",),
            language="EN",
            has_second_line=True,
            lines=("12R", "M20 • EN"),
            number_options=(("12", None), ("★12", None)),
            layout="modern",
        ),
    ),
    (
        "000/280 R\nM20 • EN",
        CollectorParse(
            number="0",
            total=280,
            rarity="R",
            set_tokens=("M20",),
            language="EN",
            has_second_line=True,
            lines=("000/280 R", "M20 • EN"),
            number_options=(("0", 280), ("★0", 280)),
            layout="modern",
        ),
    ),
    (
        "12/280 • R\nM20 • EN",
        CollectorParse(
            number="12",
            total=280,
            rarity="R",
            set_tokens=("M20",),
            language="EN",
            has_second_line=True,
            lines=("12/280 • R", "M20 • EN"),
            number_options=(("12", 280), ("★12", 280)),
            layout="modern",
        ),
    ),
    (
        "12/280 x R\nM20 • EN",
        CollectorParse(
            number="12",
            total=280,
            rarity="R",
            set_tokens=("M20",),
            language="EN",
            has_second_line=True,
            lines=("12/280 x R", "M20 • EN"),
            number_options=(("12", 280), ("★12", 280)),
            layout="modern",
        ),
    ),
    (
        "™ & © 2012 Wizards of the Coast 12 174",
        CollectorParse(
            number="174",
            total=None,
            rarity=None,
            set_tokens=(),
            language=None,
            has_second_line=False,
            lines=("™ & © 2012 Wizards of the Coast 12 174",),
            number_options=(("174", None), ("12174", None), ("★174", None)),
            layout="legal-number",
        ),
    ),
    (
        "© 1995 Wizards 1297280 1234567",
        CollectorParse(
            number="123",
            total=567,
            rarity=None,
            set_tokens=(),
            language=None,
            has_second_line=False,
            lines=("© 1995 Wizards 1297280 1234567",),
            number_options=(
                ("123", 567),
                ("123", 4567),
                ("12", 4567),
                ("1234", 567),
                ("1234", 67),
                ("123", 456),
                ("12", 456),
                ("12", 3456),
                ("1", 3456),
                ("123", 56),
                ("12", 345),
                ("1", 345),
                ("12", 45),
                ("1", 2345),
            ),
            layout="legal-number",
        ),
    ),
    (
        "1993/2099\nM20 • EN",
        CollectorParse(
            number=None,
            total=None,
            rarity=None,
            set_tokens=("M20",),
            language="EN",
            has_second_line=True,
            lines=("1993/2099", "M20 • EN"),
            number_options=(),
            layout=None,
        ),
    ),
    (
        "1993/2100\nM20 • EN",
        CollectorParse(
            number="1993",
            total=2100,
            rarity=None,
            set_tokens=("M20",),
            language="EN",
            has_second_line=True,
            lines=("1993/2100", "M20 • EN"),
            number_options=(("1993", 2100), ("★1993", 2100)),
            layout="modern",
        ),
    ),
    (
        "5&/344\r M20 • EN7 Anna",
        CollectorParse(
            number="58",
            total=344,
            rarity=None,
            set_tokens=("M20",),
            language="EN",
            has_second_line=True,
            lines=("58/344", "M20 • EN7 Anna"),
            number_options=(("58", 344), ("★58", 344)),
            layout="modern",
        ),
    ),
    (
        "C 0172\nDSK • EN ✎ Anna Chen",
        CollectorParse(
            number="172",
            total=None,
            rarity="C",
            set_tokens=("DSK",),
            language="EN",
            has_second_line=True,
            lines=("C 0172", "DSK • EN ✎ Anna Chen"),
            number_options=(("172", None), ("★172", None)),
            layout="rarity-first",
        ),
    ),
    (
        "123/280 R\nM20 • ENX",
        CollectorParse(
            number="123",
            total=280,
            rarity="R",
            set_tokens=("M20", "ENX"),
            language=None,
            has_second_line=True,
            lines=("123/280 R", "M20 • ENX"),
            number_options=(("123", 280), ("★123", 280)),
            layout="modern",
        ),
    ),
    (
        "123/280 R\nIIws M20",
        CollectorParse(
            number="123",
            total=280,
            rarity="R",
            set_tokens=(),
            language=None,
            has_second_line=True,
            lines=("123/280 R", "IIws M20"),
            number_options=(("123", 280), ("★123", 280)),
            layout=None,
        ),
    ),
    (
        "123/280 R\nM20\nXLN • EN",
        CollectorParse(
            number="123",
            total=280,
            rarity="R",
            set_tokens=("M20", "XLN"),
            language="EN",
            has_second_line=True,
            lines=("123/280 R", "M20", "XLN • EN"),
            number_options=(("123", 280), ("★123", 280)),
            layout="modern",
        ),
    ),
    (
        "no digits here",
        CollectorParse(
            number=None,
            total=None,
            rarity=None,
            set_tokens=(),
            language=None,
            has_second_line=True,
            lines=("no digits here",),
            number_options=(),
            layout=None,
        ),
    ),
    (
        "123/280 R\nMOMEN Anna",
        CollectorParse(
            number="123",
            total=280,
            rarity="R",
            set_tokens=("MOM", "MOMEN"),
            language="EN",
            has_second_line=True,
            lines=("123/280 R", "MOMEN Anna"),
            number_options=(("123", 280), ("★123", 280)),
            layout="modern",
        ),
    ),
    (
        "✎ Anna Chen\n™ & © 2012 Wizards of the Coast 174/274",
        CollectorParse(
            number="174",
            total=274,
            rarity=None,
            set_tokens=(),
            language=None,
            has_second_line=False,
            lines=("✎ Anna Chen", "™ & © 2012 Wizards of the Coast 174/274"),
            number_options=(("174", 274), ("★174", 274)),
            layout="legal-number",
        ),
    ),
    (
        "Illus. Anna Chen 12\nM20",
        CollectorParse(
            number=None,
            total=None,
            rarity=None,
            set_tokens=("M20",),
            language=None,
            has_second_line=True,
            lines=("Illus. Anna Chen 12", "M20"),
            number_options=(),
            layout=None,
        ),
    ),
    (
        "12 Illus. Anna\nM20 • EN",
        CollectorParse(
            number=None,
            total=None,
            rarity=None,
            set_tokens=("M20",),
            language="EN",
            has_second_line=True,
            lines=("12 Illus. Anna", "M20 • EN"),
            number_options=(),
            layout=None,
        ),
    ),
    # the last of several numbers on a legal line, the first elsewhere; a star or rarity letter on a digit run;
    # an all-zero rarity-first number; a language marker on a rarity-first line; a slash at a token's edge
    (
        "12 34\nM20 • EN",
        CollectorParse(
            number="12",
            total=None,
            rarity=None,
            set_tokens=("M20",),
            language="EN",
            has_second_line=True,
            lines=("12 34", "M20 • EN"),
            number_options=(("12", None), ("★12", None)),
            layout="modern",
        ),
    ),
    (
        "© 1995 Wizards 12 34 56",
        CollectorParse(
            number="56",
            total=None,
            rarity=None,
            set_tokens=(),
            language=None,
            has_second_line=False,
            lines=("© 1995 Wizards 12 34 56",),
            number_options=(("56", None), ("3456", None), ("★56", None)),
            layout="legal-number",
        ),
    ),
    (
        "© 1995 Wizards 1297280 1234567 7654321",
        CollectorParse(
            number="765",
            total=4321,
            rarity=None,
            set_tokens=(),
            language=None,
            has_second_line=False,
            lines=("© 1995 Wizards 1297280 1234567 7654321",),
            number_options=(
                ("765", 4321),
                ("76", 4321),
                ("7654", 321),
                ("765", 321),
                ("7654", 21),
                ("76", 432),
                ("76", 5432),
                ("7", 5432),
                ("765", 432),
                ("765", 32),
                ("76", 543),
                ("7", 543),
                ("7", 6543),
                ("76", 43),
            ),
            layout="legal-number",
        ),
    ),
    (
        "★1297280\nM20 • EN",
        CollectorParse(
            number="★129",
            total=280,
            rarity=None,
            set_tokens=("M20",),
            language="EN",
            has_second_line=True,
            lines=("★1297280", "M20 • EN"),
            number_options=(
                ("★129", 280),
                ("★129", 7280),
                ("★12", 7280),
                ("★1297", 280),
                ("★1297", 80),
                ("★129", 728),
                ("★12", 728),
                ("★129", 28),
                ("★12", 9728),
                ("★1", 9728),
                ("★12", 972),
                ("★1", 972),
                ("★12", 72),
                ("★1", 2972),
            ),
            layout="modern",
        ),
    ),
    (
        "1297280R\nM20 • EN",
        CollectorParse(
            number="129",
            total=280,
            rarity="R",
            set_tokens=("M20",),
            language="EN",
            has_second_line=True,
            lines=("1297280R", "M20 • EN"),
            number_options=(
                ("129", 280),
                ("129", 7280),
                ("12", 7280),
                ("1297", 280),
                ("1297", 80),
                ("129", 728),
                ("12", 728),
                ("129", 28),
                ("12", 9728),
                ("1", 9728),
                ("12", 972),
                ("1", 972),
                ("12", 72),
                ("1", 2972),
            ),
            layout="modern",
        ),
    ),
    (
        "C 0000\nDSK • EN",
        CollectorParse(
            number="0",
            total=None,
            rarity="C",
            set_tokens=("DSK",),
            language="EN",
            has_second_line=True,
            lines=("C 0000", "DSK • EN"),
            number_options=(("0", None), ("★0", None)),
            layout="rarity-first",
        ),
    ),
    (
        "C 0172 • EN\nDSK",
        CollectorParse(
            number=None,
            total=None,
            rarity=None,
            set_tokens=("0172", "DSK"),
            language="EN",
            has_second_line=True,
            lines=("C 0172 • EN", "DSK"),
            number_options=(),
            layout=None,
        ),
    ),
    (
        "© 2012 Wizards 12/34 174/274",
        CollectorParse(
            number="174",
            total=274,
            rarity=None,
            set_tokens=(),
            language=None,
            has_second_line=False,
            lines=("© 2012 Wizards 12/34 174/274",),
            number_options=(("174", 274), ("34174", 274), ("★174", 274)),
            layout="legal-number",
        ),
    ),
    (
        "12 EN7 Anna\nM20",
        CollectorParse(
            number="12",
            total=None,
            rarity=None,
            set_tokens=("M20",),
            language=None,
            has_second_line=True,
            lines=("12 EN7 Anna", "M20"),
            number_options=(("12", None), ("★12", None)),
            layout="modern",
        ),
    ),
    (
        "M20/ • EN",
        CollectorParse(
            number=None,
            total=None,
            rarity=None,
            set_tokens=("M20",),
            language="EN",
            has_second_line=True,
            lines=("M20/ • EN",),
            number_options=(),
            layout=None,
        ),
    ),
    (
        "502 M20 • EN",
        CollectorParse(
            number="502",
            total=None,
            rarity=None,
            set_tokens=("M20",),
            language="EN",
            has_second_line=False,
            lines=("502 M20 • EN",),
            number_options=(("502", None), ("★502", None)),
            layout="modern",
        ),
    ),
    (
        "Anna\n12 R\nM20 • EN",
        CollectorParse(
            number="12",
            total=None,
            rarity="R",
            set_tokens=("M20",),
            language="EN",
            has_second_line=True,
            lines=("Anna", "12 R", "M20 • EN"),
            number_options=(("12", None), ("★12", None)),
            layout="modern",
        ),
    ),
]
DIGIT_RUNS = {
    "12345": [("12", 345), ("1", 345), ("12", 45), ("1", 2345)],
    "10395": [("10", 395), ("1", 395), ("10", 95), ("395", None)],
    "129728": [
        ("129", 728),
        ("12", 728),
        ("129", 28),
        ("12", 9728),
        ("1", 9728),
        ("12", 972),
        ("1", 972),
        ("12", 72),
        ("1", 2972),
    ],
    "1297280": [
        ("129", 280),
        ("129", 7280),
        ("12", 7280),
        ("1297", 280),
        ("1297", 80),
        ("129", 728),
        ("12", 728),
        ("129", 28),
        ("12", 9728),
        ("1", 9728),
        ("12", 972),
        ("1", 972),
        ("12", 72),
        ("1", 2972),
    ],
    "4711530": [
        ("471", 530),
        ("47", 1530),
        ("471", 1530),
        ("4711", 530),
        ("4711", 30),
        ("47", 153),
        ("4", 1153),
        ("471", 53),
        ("47", 1153),
        ("471", 153),
        ("4", 115),
        ("47", 115),
        ("47", 15),
        ("4", 7115),
    ],
    "12972801": [
        ("129", 2801),
        ("1297", 2801),
        ("1297", 801),
        ("129", 280),
        ("129", 7280),
        ("12", 7280),
        ("1297", 280),
        ("1297", 80),
        ("129", 728),
        ("12", 728),
        ("129", 28),
        ("12", 9728),
        ("1", 9728),
        ("12", 972),
        ("1", 972),
        ("12", 72),
        ("1", 2972),
    ],
    "123456789": [
        ("1234", 6789),
        ("1234", 5678),
        ("123", 5678),
        ("1234", 678),
        ("123", 567),
        ("123", 4567),
        ("12", 4567),
        ("1234", 567),
        ("1234", 67),
        ("123", 456),
        ("12", 456),
        ("12", 3456),
        ("1", 3456),
        ("123", 56),
        ("12", 345),
        ("1", 345),
        ("12", 45),
        ("1", 2345),
    ],
    "1237123": [
        ("123", 123),
        ("1237", 23),
        ("123", 7123),
        ("12", 7123),
        ("1237", 123),
        ("123", 712),
        ("12", 712),
        ("123", 12),
        ("12", 3712),
        ("1", 3712),
        ("12", 371),
        ("1", 371),
        ("12", 71),
        ("1", 2371),
    ],
    "10300": [("10", 300), ("1", 300), ("300", None)],
}


@pytest.mark.parametrize(("text", "parsed"), COLLECTOR_CASES, ids=[f"case{i}" for i in range(len(COLLECTOR_CASES))])
def test_a_collector_block_parses_whole(text: str, parsed: CollectorParse) -> None:
    assert parse_collector(text) == parsed


@pytest.mark.parametrize(("run", "options"), list(DIGIT_RUNS.items()))
def test_every_reading_of_a_digit_run_most_plausible_first(run: str, options: list) -> None:
    assert split_digit_run(run) == options


def test_a_collector_number_normalises_without_its_total_or_a_prefixs_hyphen() -> None:
    assert normalise_collector_number("1/2/3") == "1"
    assert normalise_collector_number("A-12") == "a12"
    assert normalise_collector_number(" 0 7 ★") == "7*"


def test_edit_distance_and_its_cap() -> None:
    assert levenshtein("", "ab") == 2
    assert levenshtein("a", "") == 1
    assert levenshtein("abc", "abd") == 1
    assert levenshtein("abc", "xyz", limit=5) == 3
    assert levenshtein("abcd", "wxyz") == 3, "capped at the default limit + 1"
    assert levenshtein("abcd", "wxyz", limit=2) == 3
    assert levenshtein("ab", "abcde", limit=2) == 3, "lengths too far apart"


def test_a_set_code_snaps_exactly_before_it_snaps_by_look_alikes() -> None:
    assert snap_set_code("M20", {"m20", "mzo"}) == "m20", "exact, though another code folds the same"
    assert snap_set_code("MZ0", {"m20", "mzo"}) is None, "two look-alikes: no guess"
    assert snap_set_code("OT]", {"otj", "m20"}) == "otj"
    assert snap_set_code("", {"m20"}) is None


def test_credit_words_however_ocr_mangles_them() -> None:
    for word in ("IIws", "IIvs", "IIIUS", "IIUS", "Illus", "Jonas"):
        assert is_credit_word(word), word
    for token in ("M20", "XLN", "IIXXS"):
        assert not is_credit_word(token), token


def test_a_language_marker_glued_to_the_paintbrush() -> None:
    assert [_language_of(t, first=False) for t in ("EN", "en", "EN7", "ENS", "ENZ", "ENJ", "ENA", "ENX", "EN77")] == [
        "EN",
        "EN",
        "EN",
        "EN",
        "EN",
        "EN",
        None,
        None,
        None,
    ]
    assert _language_of("EN7", first=True) is None


def test_small_helpers_a_closing_bracket_is_a_letter_and_an_abbreviation_precedes_a_name() -> None:
    assert has_letter("]1") and not has_letter("1/2")
    assert _abbreviations("Illus. Anna Chen • M20. EN") == {"Illus"}


@pytest.mark.parametrize(
    ("line", "end"),
    [
        ("1992", None),
        ("1993", 4),
        ("2099", 4),
        ("2100", None),
        ("Wizards", 7),
        ("© 1995 Wizards x", 14),
    ],
)
def test_a_legal_line_ends_after_its_last_legal_word_or_year_from_1993_to_2099(line: str, end: int | None) -> None:
    assert legal_end(line) == end


@pytest.mark.parametrize(
    ("text", "year"),
    [
        ("© 1992", None),
        ("© 1993", 1993),
        ("© 2027", 2027),
        ("© 2028", None),
        ("© 1993-2003", 2003),
        ("© 1993-2027", 2027),
        ("© 1993-2028", 1993),
        ("1995 text © 1997", 1997),
        ("art 1996", 1996),
    ],
)
def test_the_copyright_year_up_to_the_year_after_the_current_one(text: str, year: int | None) -> None:
    assert parse_copyright_year(text, current_year=2026) == year


@pytest.mark.parametrize(
    ("texts", "only"),
    [
        (["lllus. Wen Haddad\n"], True),
        (["ks, Wen Haddad\n", "Hiss. Wen Haddad\n"], True),
        (["s of the Coast, Inc.\n"], False),  # the year was cut off, not absent
        (["Illus. Tara Abbott\n", "© Wizards"], False),
        (["Illus. Tara Abbott 1995"], False),
        (["Illus. Tara Abbott\nNOT FOR SALE"], False),
        ([], True),
    ],
)
def test_reads_saw_only_an_artist_credit_with_no_digit_and_no_legal_word(texts: list[str], only: bool) -> None:
    assert credit_only(texts) is only
