"""Where in the card's bottom band the collector number is read: the blocks that may hold it, in order, and each
block cut and made ready once for every variant the reader tries (`Prepared`).

The number is in the block at the left (modern frames, and the 2003 frame's left-aligned legal line) or in the
centre (the 1997 frame's centred legal line). The tight view of a block is the part that holds the number: a code
block's number line and the set code under it, or the end of a legal line.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import numpy as np
from PIL import Image

from stage_e_dagster.domain.evidence import preprocess as pp
from stage_e_dagster.domain.evidence.band import Block, BottomBand
from stage_e_dagster.domain.printed_lines import CENTRED, CODE_LAYOUTS, NUMBERLESS

# Scale of the whole crop's height when no text line is found.
FALLBACK_CROP_HEIGHT = 150
LINES_READ = 3
"""A block's first lines read together: the modern block's two, the 2003 frame's credit and legal line."""
CODE_WIDTH = 8
"""Glyph heights of a modern block's second line read with the number: "XXXXX • EN", not the artist after it."""
LEGAL_TAIL = 9
"""Glyph heights at the end of a legal line read for its number ("316★/350" is about six), from the start of the
word they reach into: never a cut through the number, which OCR would read as a shorter one."""
LEGAL_LINE = 21
"""Glyph heights a legal line holding a number runs at least ("™ & © 2012 Wizards of the Coast 174/274", about 40
characters); a modern block's lines stay under it, though its second line, with a long artist's name, comes near."""
NUMBER_LINE = 8
"""Glyph heights a modern block's first line runs at most: its number line ("261★/383 R", "C 0172"). A wider first
line is an artist's credit over a legal line."""
RECOGNISER_MARGIN = 0.3
"""Line heights kept above and below a line given to the recogniser's probabilities (twice that at its ends)."""
RECOGNISER_HEIGHT = 48
"""Pixels high a line is given to the recogniser: PP-OCR's recogniser's input height."""


@dataclass
class Prepared:
    """A block made ready once for every variant: dark text on light, its text lines, the glyph height."""

    gray: Image.Image
    lines: list[pp.Line]
    glyph: float = 0.0
    _deskewed: Prepared | None = None
    _deblurred: Prepared | None = None
    guessed: bool = False  # a second tight view, of the kind the block's shape left open
    after_legal_words: bool = False  # read only once an earlier read of the block saw a legal line's words

    @classmethod
    def of(cls, crop: Image.Image) -> Prepared:
        """The first block a number may be in (its whole text image when it has none)."""
        band = BottomBand.of(crop)
        blocks = number_blocks(band, None)
        return cls.of_block(band, blocks[0]) if blocks else cls(band.image, [])

    @classmethod
    def of_block(cls, band: BottomBand, block: Block) -> Prepared:
        gray, lines = band.crop(block)
        return cls(gray, lines, band.blocks.glyph)

    def deblurred(self) -> Prepared:
        """The crop with its blur undone; its lines stay where they were found."""
        if self._deblurred is None:
            self._deblurred = Prepared(pp.deblurred(self.gray), self.lines, self.glyph)
        return self._deblurred

    def deskewed(self) -> Prepared:
        if self._deskewed is None:
            turned = pp.deskewed(self.gray)
            if turned is self.gray:
                self._deskewed = self
            else:
                ink = np.asarray(turned, dtype=np.uint8) < pp.otsu(turned)
                glyph = self.glyph or max((line.height for line in self.lines), default=0)
                lines = [line for line in pp.find_lines(ink, min_height=max(2, round(0.45 * glyph)))
                         if line.height <= 2.6 * max(glyph, 1)] if glyph else []
                self._deskewed = Prepared(turned, lines or self.lines, self.glyph)
        return self._deskewed

    def text(self, target: float = pp.TARGET_LINE_HEIGHT) -> Image.Image:
        """The crop cut to its (first three) text lines and scaled to `target`, or all of it when none is found."""
        if not self.lines:
            return pp.resized(self.gray, FALLBACK_CROP_HEIGHT / max(1, self.gray.height))
        return pp.text_crop(self.gray, self.lines[:LINES_READ], target)


def number_blocks(band: BottomBand, expected: Collection[str] | None) -> list[Block]:
    """The blocks that may hold the collector number, in the order to read them: the block at the left (or one
    spanning the band), then the widest in the centre; the centre first when every expected layout is the 1997
    frame's centred one; none when every expected layout prints no number."""
    if expected and all(kind == NUMBERLESS for kind in expected):
        return []
    blocks = band.blocks.blocks
    left = [b for b in blocks if b.place in ("left", "wide")][:1]
    centre = sorted((b for b in blocks if b.place == "centre"), key=lambda b: -b.width)[:1]
    if expected and all(kind in (CENTRED, NUMBERLESS) for kind in expected):
        return centre + left
    return left + centre


def family(expected: Collection[str] | None) -> str | None:
    """"code" when every numbered layout expected prints a set code (the number leads a block at the left), "legal"
    when none does (the number ends a legal line), else None (mixed or unknown)."""
    numbered = {kind for kind in expected or () if kind != NUMBERLESS}
    if not numbered:
        return None
    if numbered <= set(CODE_LAYOUTS):
        return "code"
    return "legal" if not numbered & set(CODE_LAYOUTS) else None


def shape_family(block: Block, glyph: float) -> str:
    """Where a block's number stands, by its shape, when the catalogue cannot say: a centred block, one whose first
    line is wider than a number line (an artist's credit over the legal line), or one whose last line runs
    `LEGAL_LINE` glyph heights or more ("™ & © 2012 Wizards of the Coast 174/274"), is a legal line's; any other (a
    short number line over a set code and the artist) a code block's."""
    first, last = block.lines[0], block.lines[-1]
    if block.place == "centre" or last.right - last.left >= LEGAL_LINE * glyph:
        return "legal"
    if len(block.lines) > 1 and first.right - first.left > NUMBER_LINE * glyph:
        return "legal"
    return "code"


def tight_view(band: BottomBand, block: Block, kind: str) -> Prepared:
    """The part of a block that holds the number, read first when the layout is known: the number line and the
    set code and language after it, not the artist ("code"); the end of the last line from a word's start, the
    number and the legal word before it ("legal")."""
    glyph = band.blocks.glyph
    if kind == "code":
        lines = block.lines[:2]
        widest = max(line.right for line in lines)
        right = block.left + max(lines[0].right, min(widest, lines[0].left + round(CODE_WIDTH * glyph)))
        gray, out = band.crop(block, lines, right=right)
    else:
        line = block.lines[-1]
        words = band.words(block, line)
        reach = block.left + line.right - LEGAL_TAIL * glyph  # the number and the legal word before it
        left = max((start for start, _ in words if start <= reach), default=words[0][0])
        gray, out = band.crop(block, (line,), left=left)
    return Prepared(gray, out, glyph)


def recogniser_line(prepared: Prepared) -> Image.Image | None:
    """The view's first text line as the CTC recogniser's probabilities are asked about it (`line_verify`): cut
    close round its ink and scaled to the recogniser's input height; None when the view found no line.

    The recogniser was trained on lines their type nearly fills. The margins and padding Tesseract wants leave the
    type about a third of the height, where blurred digits score the right string far worse: cut close, small
    type is read at the size the recogniser knows."""
    if not prepared.lines:
        return None
    line = prepared.lines[0]
    margin = max(1, round(line.height * RECOGNISER_MARGIN))
    gray = prepared.gray
    crop = gray.crop((max(0, line.left - 2 * margin), max(0, line.top - margin),
                      min(gray.width, line.right + 2 * margin), min(gray.height, line.bottom + margin)))
    factor = RECOGNISER_HEIGHT / crop.height
    return crop.resize((max(8, round(crop.width * factor)), RECOGNISER_HEIGHT), Image.LANCZOS)


def number_line_first(block: Block, glyph: float) -> bool:
    """Whether a block read as a legal line's by its long last line may be a modern one: its first line is short
    enough to be a number line ("149/153 L" over "RZK • EN ✎ Desmond Achterberg", a long artist's name)."""
    first = block.lines[0]
    return block.place != "centre" and len(block.lines) > 1 and first.right - first.left <= NUMBER_LINE * glyph
