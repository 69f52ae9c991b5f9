"""The legal line read for its copyright year: the block that holds it in the card's bottom band, and the start of
its bottom line ("™ & © 2019"), the whole block only when that start is not enough.

The era calculator wants the year; the collector reader (`collector`) reads the number's block, and this module
reads the other one, never the block the number was read from.
"""

from __future__ import annotations

from collections.abc import Callable

from PIL import Image

from stage_e_dagster.domain.evidence import preprocess as pp
from stage_e_dagster.domain.evidence.band import Block, BottomBand
from stage_e_dagster.domain.evidence.collector_views import Prepared
from stage_e_dagster.domain.evidence.ocr import OcrEngine

LEGAL_CROP_HEIGHT = 120
"""Height the whole band is scaled to when no block can hold a legal line."""
YEAR_WIDTH = 9
"""Glyph heights at the start of a legal line read for its copyright year ("™ & © 2019" is about six)."""


def legal_block(band: BottomBand, skip: Block | None) -> Block | None:
    """The block most likely to hold the legal line (its copyright year): the block at the right (modern
    frames), else the lowest other block; never `skip` (the block the number was read from), never one too short
    to hold "© 1995" (the figures of a P/T box)."""
    glyph = band.blocks.glyph
    others = [b for b in band.blocks.blocks if b is not skip  # a P/T box's figures are no legal line
              and max(line.right - line.left for line in b.lines) >= YEAR_WIDTH * glyph]
    right = [b for b in others if b.place == "right"]
    if right:
        return right[-1]
    return max(others, key=lambda b: (b.bottom, b.width), default=None)


def read_legal(crop: Image.Image | BottomBand, engine: OcrEngine, accept: Callable[[str], bool],
               skip: Block | None = None, skip_is_credit: bool = False) -> str | None:
    """OCR text of the legal line: the start of the legal block's bottom line first, where the copyright year is
    ("™ & © 2019", to the end of a word), the whole block if `accept` refuses that (`crop`: the bottom band, or a
    crop of the legal line).

    None when no block but `skip` can hold a legal line and `skip_is_credit` says the reads of `skip` saw an artist
    credit alone ("Illus. artist", `legal_text.credit_only`): the band holds no year, and reading all of it again would
    read the same text."""
    band = crop if isinstance(crop, BottomBand) else BottomBand.of(crop)
    block = legal_block(band, skip)
    if block is None and skip is not None and skip_is_credit:
        return None
    if block is None:
        return engine.read(pp.pad(pp.binarise(pp.resized(band.image, LEGAL_CROP_HEIGHT / max(1, band.image.height)))),
                           psm=6)
    glyph = band.blocks.glyph
    line = block.lines[-1]
    words = band.words(block, line)
    reach = block.left + line.left + YEAR_WIDTH * glyph
    right = min((end for _, end in words if end >= reach), default=block.left + line.right)
    gray, lines = band.crop(block, (line,), right=right)
    read = engine.read(pp.pad(pp.binarise(Prepared(gray, lines, glyph).text())), psm=6)
    if accept(read) or (len(block.lines) == 1 and right >= block.left + line.right):
        return read  # the year, or all the block holds was read
    gray, lines = band.crop(block)
    return engine.read(pp.pad(pp.binarise(Prepared(gray, lines, glyph).text())), psm=6)
