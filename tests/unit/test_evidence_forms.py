"""The collector-line forms beyond "123/280 R" over "M20 • EN": prefixed, suffixed, starred and zero-padded numbers,
language markers other than EN and token set codes, read by the parser, confirmed by the reader's catalogue check
and matched by the join-key calculator (no OCR, no images)."""

from __future__ import annotations

from datetime import date

import pytest

from stage_e_dagster.domain.calculators.join_key import decide_join_key
from stage_e_dagster.domain.catalog import CardRef, ExpansionRef, PrintingRef
from stage_e_dagster.domain.decisions import Abstention, Vote
from stage_e_dagster.domain.evidence.model import Evidence
from stage_e_dagster.domain.evidence.parse import normalise_collector_number, parse_collector
from stage_e_dagster.domain.evidence.read_catalog import ReadCatalog, resolve

# (OCR text, number read, its normalised form, set token, language)
FORMS = [
    ("12s/280 R\nM20 • EN", "12s", "12s", "M20", "EN"),
    ("12a/280 U\nM20 • EN", "12a", "12a", "M20", "EN"),
    ("12★/280 M\nM20 • EN", "★12", "12*", "M20", "EN"),
    ("★12/280 M\nM20 • EN", "★12", "12*", "M20", "EN"),
    ("A12/280 R\nY24 • EN", "A12", "a12", "Y24", "EN"),
    ("A-12/280 R\nY24 • EN", "A12", "a12", "Y24", "EN"),
    ("007/280 C\nM20 • EN", "7", "7", "M20", "EN"),
    ("123/280 R\nM20 • DE", "123", "123", "M20", "DE"),
    ("123/280 R\nM20 • JA ✎ Anna Chen", "123", "123", "M20", "JA"),
    ("123/280 R\nM20 • FR", "123", "123", "M20", "FR"),
    ("5/14 C\nTM20 • EN", "5", "5", "TM20", "EN"),
    ("5/14 C\nTM20 • DE", "5", "5", "TM20", "DE"),
]


@pytest.mark.parametrize(("text", "number", "normalised", "token", "language"), FORMS)
def test_each_form_reads_its_number_set_code_and_language(text: str, number: str, normalised: str, token: str,
                                                           language: str) -> None:
    parsed = parse_collector(text)
    assert (parsed.number, parsed.set_token, parsed.language) == (number, token, language)
    assert normalise_collector_number(parsed.number) == normalised


@pytest.mark.parametrize(("catalogue", "printed"), [("A-12", "A12"), ("a12", "A-12"), ("12★", "12*"),
                                                    ("12s", "12S"), ("007", "7"), ("12", "0012/280")])
def test_catalogue_and_printed_forms_compare_equal(catalogue: str, printed: str) -> None:
    assert normalise_collector_number(catalogue) == normalise_collector_number(printed)


def test_a_prefix_is_not_a_suffix_and_a_suffix_is_not_another_number() -> None:
    assert normalise_collector_number("A12") != normalise_collector_number("12")
    assert normalise_collector_number("12s") != normalise_collector_number("12")
    assert normalise_collector_number("12★") != normalise_collector_number("12")


def test_a_prefix_that_looks_like_a_digit_is_offered_as_the_digit_first() -> None:
    parsed = parse_collector("I23/280 R\nM20 • EN")
    assert parsed.number == "123"
    assert ("I23", 280) in parsed.number_options


def test_a_lone_set_code_is_never_a_prefixed_number() -> None:
    assert parse_collector("XL9 - ENZ Wen Doreey").number is None
    assert parse_collector("M20 • DE").number is None


CATALOG = ReadCatalog.build(
    [("Grim Knight", "y24", "A-12"), ("Grim Knight", "m20", "12"), ("Soldier", "tm20", "5"),
     ("Soldier", "tm21", "5"), ("Pale Sage", "m20", "12s"), ("Pale Sage", "m20", "12★"), ("Bold Sage", "m20", "14"),
     ("Bold Sage", "pm20", "14s"), ("Dim Sage", "m20", "15★")],
    totals={"y24": 280, "m20": 280, "pm20": 280, "tm20": 14, "tm21": 14},
)


@pytest.mark.parametrize(("text", "name", "number", "set_code", "confirmed"), [
    ("12/280 R\nY24 • EN", "Grim Knight", "12", "y24", False),  # the prefix lost by OCR: not this printing
    ("A12/280 R\nY24 • EN", "Grim Knight", "A12", "y24", True),
    ("5/14 C\nTM20 • DE", "Soldier", "5", "tm20", True),
    ("14s/280 R\nPM20 • EN", "Bold Sage", "14s", "pm20", True),  # its unsuffixed twin is in another set
    ("15★/280 R\nM20 • EN", "Dim Sage", "★15", "m20", True),
    # Twins in one set differing by a suffix or star: one read that lost or invented it cannot tell them apart.
    ("12s/280 R\nM20 • EN", "Pale Sage", "12s", "m20", False),
    ("12★/280 R\nM20 • EN", "Pale Sage", "★12", "m20", False),
])
def test_the_reader_confirms_each_form_against_the_catalogue(text: str, name: str, number: str, set_code: str,
                                                            confirmed: bool) -> None:
    found = resolve(parse_collector(text), CATALOG.set_codes, CATALOG, name)
    assert (found.number, found.set_code, found.confirmed) == (number, set_code, confirmed)


EXPANSIONS = {code: ExpansionRef(code, date(2020, 1, 1)) for code in ("y24", "m20", "tm20", "tm21")}
GRIM = [PrintingRef(1, "a", "Grim Knight", "y24", "A-12"), PrintingRef(2, "b", "Grim Knight", "m20", "12")]
SOLDIER = [PrintingRef(3, "c", "Soldier", "tm20", "5"), PrintingRef(4, "d", "Soldier", "tm21", "5")]
SAGE = [PrintingRef(5, "e", "Pale Sage", "m20", "12s"), PrintingRef(6, "f", "Pale Sage", "m20", "12★"),
        PrintingRef(7, "g", "Pale Sage", "m20", "12")]


@pytest.mark.parametrize(("name", "candidates", "text", "printing_id"), [
    ("Grim Knight", GRIM, "A12/280 R\nY24 • EN", 1),
    ("Grim Knight", GRIM, "012/280 R\nM20 • EN", 2),
    ("Soldier", SOLDIER, "5/14 C\nTM20 • DE", 3),
    ("Soldier", SOLDIER, "5/14 C\nTM21 • EN", 4),
    ("Pale Sage", SAGE[:1], "12s/280 R\nM20 • EN", 5),
    ("Pale Sage", SAGE[1:2], "12★/280 R\nM20 • EN", 6),
    ("Pale Sage", SAGE[2:], "12/280 R\nM20 • EN", 7),
])
def test_the_join_key_matches_each_form_to_its_printing(name: str, candidates: list[PrintingRef], text: str,
                                                        printing_id: int) -> None:
    parsed = parse_collector(text)
    evidence = Evidence(collector_number=parsed.number, set_code=parsed.set_token.lower(),
                        set_code_raw=parsed.set_token, language=parsed.language)
    result = decide_join_key(CardRef(9, name), evidence, candidates, EXPANSIONS)
    assert isinstance(result, Vote) and result.printing_id == printing_id, result


@pytest.mark.parametrize("text", ["12s/280 R\nM20 • EN", "12★/280 R\nM20 • EN", "12/280 R\nM20 • EN"])
def test_twins_in_one_set_that_differ_by_a_suffix_go_to_a_person(text: str) -> None:
    parsed = parse_collector(text)
    evidence = Evidence(collector_number=parsed.number, set_code="m20", set_code_raw="M20", collector_total=280)
    result = decide_join_key(CardRef(9, "Pale Sage"), evidence, SAGE, EXPANSIONS)
    assert isinstance(result, Abstention) and result.skip_reason == "suffix-sibling", result


class ScriptedEngine:
    """An OCR engine that answers each read from a script (the last answer repeats) and counts the reads."""

    name = "scripted"

    def __init__(self, *answers: str) -> None:
        self.answers, self.calls = list(answers), 0

    def read(self, image: object, psm: int = 6, whitelist: str | None = None) -> str:
        self.calls += 1
        return self.answers[min(self.calls, len(self.answers)) - 1]


def test_the_reader_stops_early_on_a_crop_where_no_read_sees_a_digit() -> None:
    from PIL import Image

    from stage_e_dagster.domain.evidence.collector import DIGITLESS_STOP, LADDER, read_collector

    blank = Image.new("RGB", (300, 80), (240, 238, 230))
    nothing = ScriptedEngine("", "TR L ]", "™")
    reading = read_collector(blank, {"m20"}, nothing)
    assert (reading.number, nothing.calls) == (None, DIGITLESS_STOP) and DIGITLESS_STOP < len(LADDER)
    late = ScriptedEngine("", "T", "1", "12/280 R\nM20 • EN", "12/280 R\nM20 • EN")  # a digit seen by the third
    assert read_collector(blank, {"m20"}, late).number == "12" and late.calls == 5
