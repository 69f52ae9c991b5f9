"""Which ink of the card's bottom band is text, and in which block and line (synthetic ink masks): the collector
block at the left, a legal line at the right or in the centre, each cut into its lines; a holofoil oval, The List's
mark or what is left of a frame is no glyph; and real scans with the mark or the oval, read."""

from __future__ import annotations

from io import BytesIO

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFilter, ImageFont

from stage_e_dagster.demo.catalog import generate_catalog
from stage_e_dagster.demo.hard import read_catalog_of
from stage_e_dagster.demo.holdout.type import face_path
from stage_e_dagster.demo.info import InfoStyle, layout_of_card
from stage_e_dagster.demo.render import render_scan
from stage_e_dagster.domain.evidence.band import BORDER_ROWS, Block, BottomBand, _uneven, find_blocks
from stage_e_dagster.domain.evidence.collector import read_collector
from stage_e_dagster.domain.evidence.collector_views import shape_family
from stage_e_dagster.domain.evidence.extract import extract_evidence
from stage_e_dagster.domain.evidence.model import Evidence
from stage_e_dagster.domain.evidence.ocr import TesserocrEngine
from stage_e_dagster.domain.evidence.parse import normalise_collector_number
from stage_e_dagster.domain.evidence.preprocess import Line, text_image
from stage_e_dagster.domain.evidence.read_catalog import ReadCatalog
from stage_e_dagster.domain.printed_lines import LEGAL_NUMBER, MODERN, NUMBERLESS, RARITY_FIRST

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


def test_a_centred_legal_line_under_a_wide_remnant_is_still_centred() -> None:
    """The frame's edge or the art's foot above a 1997-frame legal line can widen its block to the right edge; the
    block is still the centred line's, where the reader looks for such a card's number. Breakage caught: the block
    placed at the right, and the number read from a remnant at the left."""
    ink = np.zeros((HEIGHT, WIDTH), dtype=bool)
    _line(ink, 25, 300, 8, letters=6)  # the remnant, glyph-like, from the middle to the right edge
    _line(ink, 45, 380, 2)  # "Illus. artist"
    _line(ink, 65, 290, 6)  # "© 1999 Wizards of the Coast, Inc. 123/350", centred
    assert _places(ink) == [("centre", 3)]
    shifted = np.zeros((HEIGHT, WIDTH), dtype=bool)
    _line(shifted, 25, 300, 8, letters=6)
    _line(shifted, 65, 560, 5)  # a modern legal line at the right: still the right's
    assert _places(shifted) == [("right", 2)]


def test_lines_a_tilt_runs_together_are_found_once_the_band_is_level() -> None:
    """A scan tilted by 1.8 degrees: across a long artist's line the two lines of the collector block run into
    one row run too tall for a line, and the block is lost. The band is turned level first. Breakage caught: the
    band read as it lies (no block at the left)."""
    image = Image.new("L", (900, 100), 245)
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=16)
    draw.text((40, 35), "032/302 C", font=font, fill=20)
    draw.text((40, 54), "YZC . EN Farid Santos-Hollingsworth", font=font, fill=20)
    draw.text((560, 54), "TM & (c) 2019 Wizards of the Coast", font=font, fill=20)
    tilted = image.rotate(1.8, resample=Image.BICUBIC, fillcolor=245)
    as_it_lies = find_blocks(np.asarray(tilted) < 128)
    assert as_it_lies.slanted and as_it_lies.at("left") is None
    left = BottomBand.of(tilted).blocks.at("left")
    assert left is not None and len(left.lines) == 2


def test_type_over_art_whose_light_changes_is_found_against_its_own_surroundings() -> None:
    """A borderless printing: light type over dark art with a lighter patch from the band's top edge across the
    collector block. Against one background level the patch is no border, it touches the edge and is whited out
    with the type on it, and the block is lost. Where the border's light changes across the band, each pixel is
    measured against its neighbourhood. Breakage caught: one level for the whole band (no block at the left)."""
    image = Image.new("L", (900, 110), 50)
    ImageDraw.Draw(image).polygon([(0, 0), (300, 0), (160, 110), (0, 110)], fill=120)
    image = image.filter(ImageFilter.GaussianBlur(20))
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=16)
    draw.text((40, 40), "103/097 U", font=font, fill=235)
    draw.text((40, 62), "RNT . EN Rhea Ruiz", font=font, fill=235)
    draw.text((560, 62), "TM & (c) 2020 Wizards of the Coast", font=font, fill=235)
    assert find_blocks(text_image(image, background_rows=BORDER_ROWS).ink).at("left") is None  # one level
    left = BottomBand.of(image).blocks.at("left")
    assert left is not None and len(left.lines) == 2
    even = Image.new("L", (900, 110), 50)  # a printed border: one level
    ImageDraw.Draw(even).text((40, 40), "103/097 U", font=font, fill=235)
    assert not _uneven(np.asarray(even))


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


def test_a_short_legal_line_under_a_short_credit_is_read_at_its_end() -> None:
    """"Illus. Kaito Garza" over "™ & © 2007 Wizards of the Coast 2/391" in condensed type has a code block's shape,
    and a name with printings of every layout leaves the shape to decide: the code view reads the legal line's
    start, a year and no number. Once a read saw a legal line's words, its end is read too. Breakage caught: the
    code view alone read (no number, the card taken as numberless)."""
    font = ImageFont.truetype(face_path("fjalla"), 14)
    image = Image.new("RGB", (700, 80), (236, 236, 232))
    draw = ImageDraw.Draw(image)
    draw.text((50, 22), "Illus. Kaito Garza", font=font, fill=(20, 20, 20))
    draw.text((50, 44), "™ & © 2007 Wizards of the Coast 2/391", font=font, fill=(20, 20, 20))
    band = BottomBand.of(image)
    assert shape_family(band.blocks.blocks[0], band.blocks.glyph) == "code"  # the shape misleads
    catalog = ReadCatalog.build([("Kami", "b78", "2"), ("Kami", "neo", "31"), ("Kami", "lgn", "")],
                                totals={"b78": 391, "neo": 302},
                                layouts={"b78": [LEGAL_NUMBER], "neo": [RARITY_FIRST], "lgn": [NUMBERLESS]})
    reading = read_collector(band, catalog.set_codes, TesserocrEngine(), catalog=catalog, name="Kami")
    assert (reading.number, reading.total, reading.confirmed) == ("2", 391, True)
