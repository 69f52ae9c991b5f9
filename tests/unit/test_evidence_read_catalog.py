"""The catalogue check that lets one collector reading stand: confirmation, number-only readings, digit-run splits,
look-alike set codes settled by the card's own printings (fixed OCR strings, no images)."""

from __future__ import annotations

import pytest

from stage_e_dagster.domain.evidence.collector import read_text
from stage_e_dagster.domain.evidence.parse import parse_collector
from stage_e_dagster.domain.evidence.read_catalog import ReadCatalog, resolve

CATALOG = ReadCatalog.build(
    [
        ("Shock", "m20", "129"),
        ("Shock", "old", "42"),
        ("Shock", "s42", "7"),
        ("Opt", "old", "42"),
        ("Opt", "ol2", "42"),
        ("Fire // Ice", "m20", "12"),
        ("Bolt", "m20", "★5"),
    ],
    totals={"m20": 280, "old": 350, "ol2": 300, "s42": 99},
    set_codes=["s02", "new"],
    codeless={"old", "ol2"},
)
KNOWN = CATALOG.set_codes


def check(text: str, name: str | None, catalog: ReadCatalog | None = CATALOG):
    return resolve(parse_collector(text), KNOWN, catalog, name)


def test_build_indexes_sets_numbers_totals_and_names() -> None:
    assert CATALOG.set_codes == {"m20", "old", "ol2", "s42", "s02", "new"}
    assert CATALOG.numbers["m20"] == {"129", "12", "5*"}
    assert CATALOG.printings_of("shock") == (("m20", "129"), ("old", "42"), ("s42", "7"))
    assert CATALOG.printings_of("Fire") == CATALOG.printings_of("Fire // Ice") == (("m20", "12"),)
    assert CATALOG.printings_of("Nope") == () and CATALOG.printings_of(None) == ()


@pytest.mark.parametrize(
    ("text", "name", "number", "set_code", "confirmed", "settled"),
    [
        ("129/280 R\nM20 • EN", "Shock", "129", "m20", True, True),
        ("129/280 R\nM2O • EN", "Shock", "129", "m20", True, True),  # look-alike snapped
        ("128/280 R\nM20 • EN", "Shock", "128", "m20", False, False),  # not a printing of Shock
        ("129/281 R\nM20 • EN", "Shock", "129", "m20", False, False),  # total read is not m20's
        ("129/280 R\nM20 • EN", "Opt", "129", "m20", False, False),  # someone else's printing
        ("129/280 R\nM20 • EN", None, "129", "m20", False, False),  # no name: nothing confirmed
        ("1297280 R\nM20 • EN 7 Jonas", "Shock", "129", "m20", True, True),  # slash read as 7
        ("%5/280 M\nM20 • EN", "Bolt", "★5", "m20", True, True),  # star read as %
        ("7/99 C\nS72 • EN", "Shock", "7", "s42", True, True),  # S72: s02 or s42, Shock is only in s42
    ],
)
def test_set_and_number(text: str, name: str | None, number: str, set_code: str, confirmed: bool,
                        settled: bool) -> None:
    found = check(text, name)
    assert (found.number, found.set_code, found.confirmed, found.settled) == (number, set_code, confirmed, settled)


def test_the_catalogue_picks_the_split_of_a_digit_run() -> None:
    # "129280" is 129/280 with the slash lost, or 12/280 with the slash read as 9: only the card's printings tell.
    assert parse_collector("129280 R\nM20 • EN").number == "129"
    assert (check("129280 R\nM20 • EN", "Shock").number, check("129280 R\nM20 • EN", "Shock").confirmed) == (
        "129", True)
    fire = check("129280 R\nM20 • EN", "Fire // Ice")
    assert (fire.number, fire.set_code, fire.confirmed) == ("12", "m20", True)


@pytest.mark.parametrize(
    ("text", "name", "confirmed", "settled"),
    [
        ("42/350\nIllus. Anna Chen", "Shock", True, True),  # one printing with 42, old frame, total fits
        ("42\nIllus. Anna Chen", "Shock", False, False),  # no slash seen where old prints a total: bare digits
        ("42/209\nIllus. Anna Chen", "Shock", False, False),  # total is not old's, nor one digit from it
        ("42/320\nIllus. Anna Chen", "Shock", True, False),  # one digit from old's: misread, never settled
        ("42/350\nIllus. Anna Chen", "Opt", True, True),  # two printings of Opt have 42: the total tells them apart
        ("42\nIllus. Anna Chen", "Opt", False, False),  # ... and without it nothing does
        ("129/280", "Shock", False, False),  # m20 prints a set code: a lost code line is no old frame
        ("7/99\nlllus. Anna", "Shock", False, False),  # s42 is not known to be codeless
    ],
)
def test_number_only(text: str, name: str, confirmed: bool, settled: bool) -> None:
    found = check(text, name)
    assert (found.set_code, found.confirmed, found.settled) == (None, confirmed, settled)


def test_without_codeless_knowledge_a_unique_number_confirms() -> None:
    catalog = ReadCatalog.build([("Shock", "m20", "129")])
    assert check("129/280", "Shock", catalog).confirmed


def test_reading_is_accepted_when_confirmed_and_plausible_otherwise() -> None:
    confirmed = read_text("129/280 R\nM20 • EN", KNOWN, 1, CATALOG, "Shock")
    assert confirmed.confirmed and confirmed.accepted and confirmed.settled and confirmed.number == "129"
    unconfirmed = read_text("128/280 R\nM20 • EN", KNOWN, 1, CATALOG, "Shock")
    assert not unconfirmed.confirmed and unconfirmed.accepted  # plausible: another read may agree with it


def test_digits_in_garbage_confirm_nothing_where_the_set_prints_a_total() -> None:
    """A blurred legal line read as garbage with a lone "20" in it: the name's printing numbered 20, in a set that
    prints a total, is no confirmation (no slash, no total, no rarity-first line). A rarity-first number has no total
    and still confirms. Breakage caught: a bare number confirmed by the name's printings alone (a wrong vote)."""
    catalog = ReadCatalog.build([("Plains", "grv", "266★"), ("Plains", "ptl", "20"), ("Plains", "dsk", "272")],
                                totals={"grv": 363, "ptl": 222}, codeless={"grv", "ptl"})
    garbage = read_text('"à€ 20 Wo 0d e Ct bs 20 3A3', catalog.set_codes, 1, catalog, "Plains")
    assert garbage.number == "20" and not garbage.confirmed
    assert check("C 0272\nDSK • EN", "Plains", catalog).confirmed


def test_a_total_misread_by_one_digit_still_confirms_a_codeless_number_unsettled() -> None:
    """"133/591" for the only printing numbered 133, in a set of 391 that prints no code: confirmed, with the
    set's total, never settled. A total two digits off, or a number a rival could be meant by, confirms nothing.
    Breakage caught: a one-digit slip of the total losing the printing; or any total taken."""
    catalog = ReadCatalog.build([("Lava Axe", "b78", "133"), ("Lava Axe", "ffj", "13")],
                                totals={"b78": 391, "ffj": 382}, codeless={"b78", "ffj"})
    near = check("© 2007 Wizards of the Coast 133/591", "Lava Axe", catalog)
    assert (near.number, near.total, near.confirmed, near.settled) == ("133", 391, True, False)
    assert not check("© 2007 Wizards of the Coast 133/520", "Lava Axe", catalog).confirmed
    assert not check("© 2007 Wizards of the Coast 13/592", "Lava Axe", catalog).confirmed  # 13 could be 133's piece
