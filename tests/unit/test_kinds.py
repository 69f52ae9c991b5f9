"""The source conventions (`domain.kinds.classify`) and the eligibility reasons (`machine_ineligibility`)."""

from __future__ import annotations

import pytest

from stage_e_dagster.domain.filenames import parse_card_filename
from stage_e_dagster.domain.kinds import (
    DEFAULT_CONVENTIONS,
    KINDS,
    Conventions,
    Upload,
    classify,
    is_token_printing,
    machine_ineligibility,
    name_and_hint,
    printing_fits,
    scan_dpi,
    under_dpi,
)


@pytest.mark.parametrize(("path", "kind"), [
    ("Opt [XLN].jpg", "card"),
    ("tokens/Goblin.png", "token"),
    ("Tokens/sub/Goblin.png", "token"),
    ("Goblin [token].png", "token"),
    ("Goblin [TOKEN] [M20].png", "token"),
    ("cardbacks/back.png", "cardback"),
    ("back [cardback].jpg", "cardback"),
    ("tokens/back [cardback].jpg", "cardback"),
    ("notokens/Opt.jpg", "card"),
    ("tokens.jpg", "card"),
])
def test_kind_from_folder_or_tag(path: str, kind: str) -> None:
    assert classify(path).kind == kind
    assert kind in KINDS


@pytest.mark.parametrize(("path", "language"), [
    ("Opt.jpg", None),
    ("Opt [de].jpg", "de"),
    ("Opt [JA] [XLN].jpg", "ja"),
    ("Opt [zhs].jpg", "zhs"),
    ("de/Opt.jpg", "de"),
    ("German/Opt.jpg", "de"),
    ("deutsch/Opt.jpg", "de"),
    ("japanese/Opt.jpg", "ja"),
    ("simplified_chinese/Opt.jpg", "zhs"),
    ("german/Opt [fr].jpg", "fr"),
    ("german/japanese/Opt.jpg", "ja"),
    ("Opt [en].jpg", "en"),
    ("Opt [xx].jpg", None),
    ("germany/Opt.jpg", None),
])
def test_language_from_tag_or_folder(path: str, language: str | None) -> None:
    assert classify(path).language == language


@pytest.mark.parametrize("path", ["Opt [custom art].jpg", "Opt [Custom-Art].jpg", "Opt [custom_art] [XLN].png"])
def test_custom_art_tag(path: str) -> None:
    assert classify(path).tags == frozenset({"custom-art"})


def test_a_plain_path_is_a_plain_card() -> None:
    assert classify("cards/Opt [XLN] (2).jpg") == Upload()
    assert classify("Opt.jpg", DEFAULT_CONVENTIONS) == Upload("card", None, frozenset())


def test_windows_separators_count_as_folders() -> None:
    assert classify("tokens\\Goblin.png").kind == "token"


def test_the_name_and_set_hint_keep_the_file_name_rules() -> None:
    # The tags the conventions read leave the card name as the file-name parser gives it.
    assert parse_card_filename("tokens/Goblin [token] [M20].png") == ("Goblin", "m20")
    assert parse_card_filename("Opt [de] [XLN].jpg") == ("Opt", "xln")


@pytest.mark.parametrize(("path", "expected"), [
    ("Opt [XLN].jpg", ("Opt", "xln")),
    ("Goblin [M20] [token].png", ("Goblin", "m20")),
    ("Opt [zhs].jpg", ("Opt", None)),
    ("Opt [XLN] [zhs] (2).jpg", ("Opt", "xln")),
    ("de/Opt [custom art] [XLN].jpg", ("Opt", "xln")),
    ("Opt [M20] [cardback].jpg", ("Opt", "m20")),
    ("[token].png", ("[token]", None)),
])
def test_convention_tags_are_never_set_hints(path: str, expected: tuple[str, str | None]) -> None:
    # parse_card_filename alone would take the right-most `[token]` / `[zhs]` for a set code.
    assert parse_card_filename("Goblin [M20] [token].png") == ("Goblin", "token")
    assert name_and_hint(path) == expected


def test_operator_conventions_replace_the_defaults() -> None:
    mine = Conventions.of(token_folders=["Spielsteine"], token_tags=["tkn"], cardback_folders=["backs"],
                          cardback_tags=["rueckseite"], custom_art_tags=["alter"], language_codes=["de", "en"],
                          language_folders=[("Auf Deutsch", "de")])
    assert classify("spielsteine/Goblin.png", mine).kind == "token"
    assert classify("Goblin [tkn].png", mine).kind == "token"
    assert classify("tokens/Goblin.png", mine).kind == "card"
    assert classify("backs/x.png", mine).kind == "cardback"
    assert classify("Opt [alter].png", mine).tags == frozenset({"custom-art"})
    assert classify("Opt [custom art].png", mine).tags == frozenset()
    assert classify("auf_deutsch/Opt.png", mine).language == "de"
    assert classify("Opt [ja].png", mine).language is None
    assert classify("german/Opt.png", mine).language is None


# A 63 x 88 mm card at exactly 200 DPI is 496 x 693 pixels (rounded down).
_AT_300 = (744, 1039)


@pytest.mark.parametrize(("upload", "size", "english_match", "reason"), [
    (Upload(), _AT_300, False, None),
    (Upload("token"), _AT_300, False, None),
    (Upload("cardback"), _AT_300, False, "card-back"),
    (Upload("cardback", tags=frozenset({"custom-art"})), _AT_300, False, "card-back"),
    (Upload(tags=frozenset({"custom-art"})), _AT_300, False, "custom-art"),
    (Upload(tags=frozenset({"custom-art"})), _AT_300, True, "custom-art"),
    (Upload(language="de"), _AT_300, False, "non-english"),
    (Upload(language="de"), _AT_300, True, None),
    (Upload(language="en"), _AT_300, False, None),
    (Upload(language="de"), (300, 420), True, "low-dpi"),
    (Upload(), (300, 420), False, "low-dpi"),
    (Upload(), (420, 300), False, "low-dpi"),
    (Upload(), (0, 0), False, None),
])
def test_machine_ineligibility(upload: Upload, size: tuple[int, int], english_match: bool,
                               reason: str | None) -> None:
    assert machine_ineligibility(upload, *size, english_match=english_match) == reason


def test_the_dpi_floor_is_the_smaller_axis() -> None:
    # 63 mm = 2.480 in, 88 mm = 3.465 in: 500 px across is 201.6 DPI, 690 px down is 199.1 DPI.
    assert machine_ineligibility(Upload(), 500, 690) == "low-dpi"
    assert machine_ineligibility(Upload(), 490, 700) == "low-dpi"
    assert machine_ineligibility(Upload(), 500, 700) is None
    assert machine_ineligibility(Upload(), 690, 500) == "low-dpi"
    assert machine_ineligibility(Upload(), 500, 690, min_dpi=150) is None
    assert scan_dpi(500, 700) == pytest.approx(201.6, abs=0.1)
    assert scan_dpi(700, 500) == scan_dpi(500, 700)
    assert scan_dpi(0, 700) is None


@pytest.mark.parametrize(("layout", "set_type", "token"), [
    ("normal", "expansion", False),
    ("token", "expansion", True),
    ("double_faced_token", "token", True),
    ("emblem", "memorabilia", True),
    ("normal", "token", True),
    (None, None, False),
])
def test_token_printings(layout: str | None, set_type: str | None, token: bool) -> None:
    assert is_token_printing(layout, set_type) is token
    assert printing_fits("token", layout, set_type) is token
    assert printing_fits("card", layout, set_type) is (not token)
    assert printing_fits("cardback", layout, set_type) is False


def test_operator_conventions_replace_the_default_card_back_tag_and_drop_half_empty_language_folders() -> None:
    mine = Conventions.of(token_folders=[], token_tags=[], cardback_folders=[], cardback_tags=["bck"],
                          custom_art_tags=["alt"], language_codes=["de"],
                          language_folders=[("", "de"), ("x", ""), ("  ", "fr"), ("Auf Deutsch", "de")])
    assert classify("Opt [bck].png", mine).kind == "cardback"
    assert classify("Opt [cardback].png", mine).kind == "card"
    assert mine.language_folders == (("auf deutsch", "de"),)
    assert name_and_hint("Opt [bck].png", mine) == ("Opt", None), "a card back's tag is no set hint"
    assert name_and_hint("Opt [bck].png") == ("Opt", "bck"), "unless the conventions name it"


def test_an_empty_path_is_a_plain_card_and_windows_separators_never_reach_the_name() -> None:
    assert classify("") == Upload()
    assert name_and_hint("tokens\\Opt [XLN].png") == ("Opt", "xln")


def test_a_side_of_zero_or_less_has_no_resolution_and_a_side_of_one_pixel_has_one() -> None:
    for size in ((0, 700), (700, 0), (-1, 700), (700, -1)):
        assert scan_dpi(*size) is None
        assert under_dpi(*size, 200) is False, "an unknown size is never under the floor"
    assert scan_dpi(1, 2) == scan_dpi(2, 1) == pytest.approx(1 / (63 / 25.4))
    # The long side limits here: 630 px across is 254 DPI, 700 px down only 202.
    assert scan_dpi(630, 700) == pytest.approx(700 / (88 / 25.4))


@pytest.mark.parametrize(("size", "under"), [
    ((315, 440), False),  # 127 DPI is 315 x 440 px exactly: at the floor is not under it
    ((314, 440), True),
    ((315, 439), True),
    ((440, 315), False),
])
def test_the_dpi_floor_where_a_whole_pixel_meets_it_exactly(size: tuple[int, int], under: bool) -> None:
    assert under_dpi(*size, 127) is under


def test_a_non_english_scan_is_ineligible_unless_english_matching_is_asked_for() -> None:
    assert machine_ineligibility(Upload(language="de"), *_AT_300) == "non-english"
