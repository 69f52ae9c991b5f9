"""File-name parsing: the card name and the expansion hint contributors put in their upload names."""

from __future__ import annotations

import pytest

from stage_e_dagster.domain.filenames import is_image_name, parse_card_filename


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("Opt [XLN].jpg", ("Opt", "xln")),
        ("Opt [XLN] (2).jpg", ("Opt", "xln")),
        ("Opt [XLN] - Copy.jpg", ("Opt", "xln")),
        ("Opt [XLN] - Copy (2).png", ("Opt", "xln")),
        ("Opt copy.png", ("Opt", None)),
        ("Copycat Mage [M20].png", ("Copycat Mage", "m20")),
        ("sub/dir/Lightning Bolt.png", ("Lightning Bolt", None)),
        ("Fire [M20] [OTJ].jpg", ("Fire", "otj")),
        ("Jace, the Mind Sculptor (proxy) [2XM].webp", ("Jace, the Mind Sculptor", "2xm")),
        ("Name [TOOLONGX].jpg", ("Name", None)),
        ("Name [ab].jpg", ("Name", None)),
        ("[M20].png", ("[M20]", None)),
        ("Storm_Crow [ALL].png", ("Storm Crow", "all")),
    ],
)
def test_parse_card_filename(path, expected):
    assert parse_card_filename(path) == expected


def test_image_suffixes():
    assert all(is_image_name(n) for n in ("a.png", "a.JPG", "a.jpeg", "a.webp"))
    assert not any(is_image_name(n) for n in ("a.gif", "a.txt", "a"))
