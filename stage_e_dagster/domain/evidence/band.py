"""The card's bottom band read as a page: its text blocks, each cut into lines, across the full width.

Real cards print the collector number in four places (`domain.printed_lines`): a block at the bottom left
(modern frames), the end of a left-aligned legal line that runs to the middle (the 2003 frame), a centred legal
line (the 1997 frame from Exodus), or nowhere. So the reader does not crop a corner: it finds the band's text first.

`find_blocks` works on the ink mask of the band (dark text on light, edges removed: `preprocess.text_image`):

1. its connected components; the glyph height `h` is the height of its capitals and digits;
2. what is no glyph is dropped: taller than `TALL` x `h` (a holofoil oval, The List's mark, what is left of a
   frame or a P/T box) or a speck;
3. the glyphs' column profile cuts the band into blocks wherever `GAP` x `h` columns hold no glyph (a word gap is
   well under it; the space between the collector block and the legal line or the oval well over it);
4. each block's row profile cuts it into lines.

A `Block` knows where it is (left, centre, right of the band) and its lines; the reader crops the text image to a
block's lines and reads them in one call.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
from PIL import Image, ImageOps

from stage_e_dagster.domain.evidence import preprocess as pp
from stage_e_dagster.domain.evidence.preprocess import Line

TALL = 1.9
"""A component this many glyph heights tall is no glyph (an oval, a mark, a box edge)."""
SPECK = 0.25
"""A component under this many glyph heights tall, or with fewer pixels than `SPECK_AREA` x h squared, is a speck."""
SPECK_AREA = 0.06
GAP = 2.6
"""Blank columns, in glyph heights, that end a block."""
MIN_GLYPH = 3
"""Components under this many pixels tall never set the glyph height."""
GLYPH_SHARE = (0.05, 0.3)
GLYPH_PERCENTILE = 80
"""The glyph height is this percentile of the heights of the components between these shares of the band's height
(real type is about a tenth of it: noise, specks and art never set it): the height of capitals and digits, which
lower-case letters outnumber in a line of text."""
BORDER_ROWS = 0.45
"""The band's background is measured below this share of its height, on the border itself: the frame above it
may fill half the band."""
STRONG_CONTRAST = 110
"""The contrast a second look at the band asks of ink when the first found no text (grey levels from the
background): light type over darkened art passes, the art's texture does not."""
WORD_GAP = 0.28
"""Blank columns, in glyph heights, between two words of a line (letters of a word stand closer)."""
LEFT_EDGE = 0.22
RIGHT_EDGE = 0.78
"""A block starting left of `LEFT_EDGE` of the band's width is at the left; one ending right of `RIGHT_EDGE` at
the right; any other is in the centre."""
UNEVEN = 40
"""Grey levels between the lightest and darkest of the border's column medians (`_uneven`) above which the band's
background is measured around each pixel: art behind borderless type, whose light changes across the band."""
SLANT = 1.6
"""A run of text rows this many glyph heights tall is lines a tilt joined or thickened (a level line is about 1.3:
capitals and descenders)."""
CENTRED_SLACK = 0.05
"""How far from the band's middle a centred line's middle may stand, as a share of the band's width."""


@dataclass(frozen=True)
class Block:
    """A block of text in the band: its columns [left, right), its lines (rows in band coordinates, columns
    within the block), and where it sits ("left", "centre", "right"; "wide" when it spans from left to right)."""

    left: int
    right: int
    lines: tuple[Line, ...]
    place: str

    @property
    def top(self) -> int:
        return self.lines[0].top

    @property
    def bottom(self) -> int:
        return self.lines[-1].bottom

    @property
    def width(self) -> int:
        return self.right - self.left


@dataclass(frozen=True)
class Blocks:
    """The band's blocks, left to right, and the glyph height they were found with (pixels; 0: no text)."""

    blocks: tuple[Block, ...]
    glyph: float
    mask: np.ndarray  # the glyphs' ink (specks and non-glyphs dropped)
    dropped: np.ndarray  # ink that is no glyph and no speck: ovals, marks, what is left of a frame
    slanted: bool = False  # a run of text rows taller than `SLANT` glyph heights: lines joined by a tilt

    def at(self, place: str) -> Block | None:
        """The first block at `place` ("left", "centre", "right", "wide")."""
        return next((b for b in self.blocks if b.place == place), None)


def _place(left: int, right: int, width: int) -> str:
    at_left, at_right = left < LEFT_EDGE * width, right > RIGHT_EDGE * width
    if at_left and at_right:
        return "wide"
    return "left" if at_left else "right" if at_right else "centre"


def _uneven(gray: np.ndarray) -> bool:
    """Whether the border's light changes across the band (art behind the type, as on borderless printings): the
    medians of eight column spans of its rows (the outer tenth at each side left out, where a card's corners and
    the scanner's bed stand) differ by more than `UNEVEN` levels. A printed border's are one level, type or not."""
    rows = gray[round(BORDER_ROWS * gray.shape[0]) :]
    side = rows.shape[1] // 10
    spans = np.array_split(rows[:, side : rows.shape[1] - side], 8, axis=1)
    medians = [float(np.median(span)) for span in spans if span.size]
    return bool(medians) and max(medians) - min(medians) > UNEVEN


def _centred(left: int, line: Line, width: int) -> bool:
    """Whether a block's line stands in the middle of the band (the 1997 frame's legal line), within
    `CENTRED_SLACK` of its width."""
    return abs(left + (line.left + line.right) / 2 - width / 2) <= CENTRED_SLACK * width


def glyph_mask(ink: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """The ink of the glyphs, the ink of what is too large to be one, and the glyphs' median height (0.0 when
    there is none)."""
    if not ink.any():
        return ink, ink, 0.0
    _, labels, stats, _ = cv2.connectedComponentsWithStats(ink.astype(np.uint8), connectivity=8)
    heights = stats[1:, cv2.CC_STAT_HEIGHT].astype(np.float64)
    widths = stats[1:, cv2.CC_STAT_WIDTH].astype(np.float64)
    sizes = stats[1:, cv2.CC_STAT_AREA]
    low, high = GLYPH_SHARE
    likely = (heights >= max(MIN_GLYPH, low * ink.shape[0])) & (heights <= high * ink.shape[0])
    if not likely.any():
        return np.zeros_like(ink), np.zeros_like(ink), 0.0
    glyph = float(np.percentile(heights[likely], GLYPH_PERCENTILE))
    large = (heights > TALL * glyph) | (widths > 40 * glyph)  # an oval, a mark, a rule across the band
    keep = ~large & (heights >= SPECK * glyph) & (sizes >= SPECK_AREA * glyph * glyph)
    return np.concatenate(([False], keep))[labels], np.concatenate(([False], large))[labels], glyph


def _runs(profile: np.ndarray, gap: int) -> list[tuple[int, int]]:
    """[start, end) runs of non-zero entries, joined across at most `gap` zero entries."""
    padded = np.concatenate(([False], profile > 0, [False]))
    edges = np.flatnonzero(padded[1:] != padded[:-1])
    runs: list[tuple[int, int]] = []
    for start, end in zip(edges[::2].tolist(), edges[1::2].tolist(), strict=True):
        if runs and start - runs[-1][1] <= gap:
            runs[-1] = (runs[-1][0], end)
        else:
            runs.append((start, end))
    return runs


def _lines(part: np.ndarray, glyph: float) -> tuple[tuple[Line, ...], bool]:
    """A block's text lines: runs of rows holding glyph ink (a glyph's height or so tall, at least 1.5 glyphs
    wide). What is no glyph is gone from the mask already, so a dense line is text, not a rule. Also whether a run
    of rows was taller than `SLANT` glyph heights, as lines are that a tilt joins or thickens."""
    lines = []
    slanted = False
    per_row = part.sum(axis=1)
    for top, bottom in _runs(per_row > max(1.0, 0.01 * part.shape[1]), gap=1):
        slanted = slanted or bottom - top > SLANT * glyph
        if not 0.45 * glyph <= bottom - top <= 2.6 * glyph:
            continue
        columns = np.flatnonzero(part[top:bottom].any(axis=0))
        if columns[-1] + 1 - columns[0] >= 1.5 * glyph:
            lines.append(Line(top, bottom, int(columns[0]), int(columns[-1]) + 1))
    return tuple(lines), slanted


def find_blocks(ink: np.ndarray) -> Blocks:
    """The text blocks of a band's ink mask (see the module's docstring)."""
    mask, dropped, glyph = glyph_mask(ink)
    if glyph == 0.0:
        return Blocks((), 0.0, mask, dropped)
    width = mask.shape[1]
    blocks: list[Block] = []
    slanted = False
    for left, right in _runs(mask.sum(axis=0), gap=max(2, round(GAP * glyph))):
        lines, tall = _lines(mask[:, left:right], glyph)
        slanted = slanted or tall
        if lines:
            place = _place(left, right, width)
            if place == "right" and len(lines) > 1 and _centred(left, lines[-1], width):
                place = "centre"  # a wide line above (the frame's edge, the art's foot) pushed it to the right
            blocks.append(Block(left, right, lines, place))
    return Blocks(tuple(blocks), glyph, mask, dropped, slanted)


@dataclass(frozen=True)
class BottomBand:
    """A card's bottom band made ready once for every read: dark text on white (what is no glyph whited out)
    and its blocks."""

    image: Image.Image
    blocks: Blocks

    @classmethod
    def of(cls, crop: Image.Image) -> BottomBand:
        """The band's text and blocks. Where the border's light changes across the band (art behind the type,
        `_uneven`) each pixel is measured against its neighbourhood, not one background level; where a run of text
        rows is too tall for a line (a tilted scan) the band is turned level first. When no block at the left or in
        the centre is found (text over art, on a borderless printing: the art's texture is ink too at the usual
        contrast), the band is taken again at a contrast only the printed text reaches."""
        gray = ImageOps.autocontrast(crop.convert("L"), cutoff=1)
        local = max(3, gray.height // 2) | 1 if _uneven(np.asarray(gray)) else 0
        text = pp.text_image(gray, background_rows=BORDER_ROWS, local=local)
        blocks = find_blocks(text.ink)
        if blocks.slanted:  # a tilted scan: its lines run together until the band is turned level
            angle = pp.skew_angle(text.image)
            if angle:
                gray = gray.rotate(angle, resample=Image.BICUBIC, fillcolor=pp.background_level(np.asarray(gray)))
                text = pp.text_image(gray, background_rows=BORDER_ROWS, local=local)
                blocks = find_blocks(text.ink)
        if not any(block.place != "right" for block in blocks.blocks):
            strong = pp.text_image(gray, min_contrast=STRONG_CONTRAST, background_rows=BORDER_ROWS)
            retry = find_blocks(strong.ink)
            if any(block.place != "right" for block in retry.blocks):
                text, blocks = strong, retry
        image = text.image
        if blocks.dropped.any():
            pixels = np.asarray(image).copy()
            pixels[blocks.dropped] = 255
            image = Image.fromarray(pixels, "L")
        return cls(image, blocks)

    def crop(self, block: Block, lines: tuple[Line, ...] | None = None, right: int | None = None,
             left: int | None = None) -> tuple[Image.Image, list[Line]]:
        """The text image around `block`'s `lines` (all of them by default; a glyph's height of margin), cut at
        band columns `left` and `right` when given, and those lines in the crop's coordinates."""
        chosen = block.lines if lines is None else lines
        margin = max(2, round(self.blocks.glyph))
        x0 = block.left + min(line.left for line in chosen) if left is None else left
        x1 = block.left + max(line.right for line in chosen) if right is None else right
        box = (max(0, x0 - margin), max(0, chosen[0].top - margin), min(self.image.width, x1 + margin),
               min(self.image.height, chosen[-1].bottom + margin))
        out = [Line(line.top - box[1], line.bottom - box[1], max(0, block.left + line.left - box[0]),
                    min(box[2] - box[0], block.left + line.right - box[0])) for line in chosen]
        return self.image.crop(box), out

    def words(self, block: Block, line: Line) -> list[tuple[int, int]]:
        """The [start, end) band columns of the words of a block's line (runs of glyph ink apart by more than
        `WORD_GAP` glyph heights)."""
        columns = self.blocks.mask[line.top:line.bottom, block.left + line.left:block.left + line.right].sum(axis=0)
        gap = max(1, round(WORD_GAP * self.blocks.glyph))
        return [(block.left + line.left + start, block.left + line.left + end) for start, end in _runs(columns, gap)]
