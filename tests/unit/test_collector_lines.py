"""Which ink of the card's bottom band is text, and in which block and line (synthetic ink masks): the collector
block at the left, a legal line at the right or in the centre, each cut into its lines; a holofoil oval, The List's
mark or what is left of a frame is no glyph; and real scans with the mark or the oval, read."""

from __future__ import annotations

from io import BytesIO

import numpy as np
import pytest

from stage_e_dagster.demo.catalog import generate_catalog
from stage_e_dagster.demo.hard import read_catalog_of
from stage_e_dagster.demo.info import InfoStyle, layout_of_card
from stage_e_dagster.demo.render import render_scan
from stage_e_dagster.domain.evidence.band import Block, find_blocks
from stage_e_dagster.domain.evidence.collector import shape_family
from stage_e_dagster.domain.evidence.extract import extract_evidence
from stage_e_dagster.domain.evidence.model import Evidence
from stage_e_dagster.domain.evidence.ocr import TesserocrEngine
from stage_e_dagster.domain.evidence.parse import normalise_collector_number
from stage_e_dagster.domain.evidence.preprocess import Line
from stage_e_dagster.domain.printed_lines import MODERN

HEIGHT, WIDTH, CAP = 100, 900, 11


def _word(ink: np.ndarray, top: int, left: int, letters: int, height: int = CAP) -> int:
    """A word of glyph-like strokes `height` tall from (top, left); returns its right edge."""
    for k in range(letters):
        x = left + k * 8
        ink[top : top + height, x : x + 6] = True
    return left + letters * 8


def _line(ink: np.ndarray, top: int, left: int, words: int, letters: int = 5) -> None:
    x = left
    for _ in range(words):
        x = _word(ink, top, x, letters) + 6  # a space is wider than the gap between letters


def _modern() -> np.ndarray:
    """A modern border: a two-line collector block at the left, the legal line at the right."""
    ink = np.zeros((HEIGHT, WIDTH), dtype=bool)
    _line(ink, 45, 40, 2)  # "171/274 C"
    _line(ink, 65, 40, 4)  # "BFZ • EN ✎ artist"
    _line(ink, 65, 560, 5)  # the legal line
    return ink


def _places(ink: np.ndarray) -> list[tuple[str, int]]:
    return [(block.place, len(block.lines)) for block in find_blocks(ink).blocks]


def test_the_collector_block_and_the_legal_line_are_blocks_of_their_own() -> None:
    found = find_blocks(_modern())
    assert [(b.place, [(line.top, line.bottom) for line in b.lines]) for b in found.blocks] == [
        ("left", [(45, 56), (65, 76)]), ("right", [(65, 76)])]
    assert found.glyph == CAP


def test_a_holofoil_oval_and_the_lists_mark_are_no_text() -> None:
    ink = _modern()
    ink[40:75, 420:480] = True  # the oval at the bottom centre, three glyphs tall
    ink[42:76, 20:30] = True  # The List's planeswalker mark at the far left, beside both lines
    found = find_blocks(ink)
    assert _places(ink) == [("left", 2), ("right", 1)]
    assert found.blocks[0].left >= 40  # the mark is not part of the block
    assert found.dropped[50, 450] and found.dropped[50, 25]


def test_specks_and_a_frame_remnant_touching_nothing_are_no_line() -> None:
    ink = _modern()
    ink[10:12, 40:300] = True  # a thin sliver of the frame's edge, two pixels tall
    for x in range(100, 800, 37):
        ink[30, x] = True  # scan noise
    assert _places(ink) == [("left", 2), ("right", 1)]


def test_a_legal_line_running_to_the_middle_and_a_centred_one() -> None:
    ink = np.zeros((HEIGHT, WIDTH), dtype=bool)
    _line(ink, 45, 72, 2)  # "✎ artist" from 8% of the width
    _line(ink, 65, 72, 7)  # "™ & © 2012 Wizards of the Coast 174/274"
    assert _places(ink) == [("left", 2)]
    centred = np.zeros((HEIGHT, WIDTH), dtype=bool)
    _line(centred, 45, 380, 2)
    _line(centred, 65, 260, 6)
    assert _places(centred) == [("centre", 2)]


def test_a_dense_line_is_still_a_line() -> None:
    """Bold or blurred type fills most of its line's width: a line of glyphs is text whatever its density."""
    ink = np.zeros((HEIGHT, WIDTH), dtype=bool)
    ink[65:76, 300:600] = True
    ink[65:76, 300:600:9] = False  # letters of a bold word, one pixel apart
    ink[45:56, 380:520] = True
    ink[45:56, 380:520:9] = False
    assert _places(ink) == [("centre", 2)]


CARDS = generate_catalog(600, seed=11)
CATALOG = read_catalog_of(CARDS)


@pytest.fixture(scope="module")
def engine() -> TesserocrEngine:
    return TesserocrEngine()


@pytest.mark.parametrize("rare", [False, True])
def test_a_scan_with_the_lists_mark_or_the_holofoil_oval_is_read(engine: TesserocrEngine, rare: bool) -> None:
    """Modern reprints from The List (the mark beside both lines of the block), or rares with their oval at the
    bottom centre, read as any other card."""
    cards = [c for c in CARDS if layout_of_card(c) == MODERN and (c["rarity"] in ("rare", "mythic")) == rare
             and c["border_color"] == "black"][:3]
    for card in cards:
        buffer = BytesIO()
        render_scan(card, long_side=1040, style=InfoStyle(list_mark=not rare)).save(buffer, "JPEG", quality=90)
        found = extract_evidence(buffer.getvalue(), known_set_codes=CATALOG.set_codes, engine=engine,
                                 catalog=CATALOG, name=card["name"], only={"collector"})
        assert isinstance(found, Evidence)
        assert normalise_collector_number(found.collector_number) == normalise_collector_number(
            card["collector_number"]), found.collector_raw


def _block(*widths: int, place: str = "left") -> Block:
    """A block of lines `widths` glyph heights wide (glyph 10 px)."""
    lines = tuple(Line(20 * i, 20 * i + 10, 0, 10 * width) for i, width in enumerate(widths))
    return Block(0, 10 * max(widths), lines, place)


@pytest.mark.parametrize(
    ("widths", "place", "kind"),
    [
        ((6, 20), "left", "code"),  # "103/122 C" over "VPK • EN ✎ Alba Castellanos": a long artist's name
        ((4, 15), "left", "code"),  # "C 0172" over "DSK • EN ✎ artist"
        ((8, 16), "left", "code"),  # "261★/383 R", the widest number line
        ((11, 24), "left", "legal"),  # "✎ Tara Kowalski" over "™ & © 2012 Wizards of the Coast 174/274"
        ((10, 18), "left", "legal"),  # a credit over a short legal line: the credit is no number line
        ((5, 23), "left", "legal"),  # "✎ Ai Lee" over a legal line as long as legal lines run
        ((12, 20), "centre", "legal"),  # the 1997 frame's centred lines
    ],
)
def test_a_blocks_shape_says_where_its_number_stands(widths: tuple[int, ...], place: str, kind: str) -> None:
    assert shape_family(_block(*widths, place=place), glyph=10.0) == kind
