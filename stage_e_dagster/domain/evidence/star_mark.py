"""Whether a legal line's collector number carries a star ("123★/350"), seen in the pixels, not read by OCR.

Premium printings of the 1997 and 2003 frames print their number with a star, and the catalogue holds them beside
their unstarred twin ("261" and "261★"): the same set, total and year, so nothing but the star tells them apart. OCR
is no witness for it: it loses the small star ("261/383") and invents one from a speck ("261%/383"). So the glyph
just before the slash is looked at as a shape:

- the line's last glyphs are cut out of the band's text image, scaled to `HEIGHT` pixels a glyph, and thresholded at
  a few levels (a darker level parts glyphs that blur joined);
- the slash is a narrow glyph, at least as tall as the digits, whose top stands right of its foot and is no bar
  (a 7's), followed by glyphs of one height and no more of them than the total has digits;
- the glyph before the slash is a digit when it is as tall as the total's digits, narrow, and not pointed at the top;
  it is a star when it is about as wide as tall, one narrow point at its top centre, its widest row (the arms) in
  its upper half and two legs apart in its bottom rows, or when it is a compact blob smaller than the digits that
  floats clear of both their top and their baseline (a small star whose points blur lost).

Letter-suffix twins ("30a" and "30b", "24" and "24a") are told the same way, by the height of the glyph before the
slash (`end_height`): a lower-case letter without ascender stands at x-height, on the digits' baseline; a digit or
a "b" as tall as the total's digits.

Every level that parts the glyphs must say the same, else nothing is said: None when the glyphs cannot be told
apart (blur joins them, the slash touches its neighbour), which leaves the twins to a person.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import cv2
import numpy as np

from stage_e_dagster.domain.evidence.band import Block, BottomBand
from stage_e_dagster.domain.evidence.fragments import FULL, X_HEIGHT

HEIGHT = 40.0
"""Pixels a glyph is scaled to before its shape is judged."""
TAIL = 10.0
"""Glyph heights at the end of the line looked at ("™ & © 2000 ... 123★/350": the number and total are about 8)."""
LEVELS = (1.0, 0.8, 0.65, 0.5)
"""Thresholds tried, as shares of the Otsu level (darker ones part glyphs that blur joined)."""
WORD_GAP = 0.6
"""Digit heights of space between glyphs that parts words: a number, its slash and its total stand closer."""
DIGIT_WIDTH = 0.78
"""Digit heights a digit's glyph is wide at most (a star, blurred or not, is wider)."""
FLOATING = (0.6, 0.85, 0.08)
"""A small star blurred to its body: its height between the first two shares of the digits', and clear of both their
top and their baseline by the third."""
T = TypeVar("T")


@dataclass(frozen=True)
class Glyph:
    """A glyph's box in the scaled crop and its ink (a mask of the box)."""

    x: int
    y: int
    w: int
    h: int
    ink: np.ndarray


def _runs(row: np.ndarray) -> list[tuple[int, int]]:
    padded = np.concatenate(([False], row, [False]))
    edges = np.flatnonzero(padded[1:] != padded[:-1])
    return list(zip(edges[::2].tolist(), edges[1::2].tolist(), strict=True))


def _glyphs(ink: np.ndarray) -> list[Glyph]:
    """The ink's glyphs left to right: components at least 0.3 glyphs tall, pieces that overlap in columns joined."""
    count, labels, stats, _ = cv2.connectedComponentsWithStats(ink.astype(np.uint8), connectivity=8)
    parts = sorted(
        ((int(s[0]), int(s[1]), int(s[2]), int(s[3]), k) for k, s in enumerate(stats) if k and s[3] >= 0.3 * HEIGHT),
        key=lambda part: part[0],
    )
    groups: list[list[int]] = []  # x0, y0, x1, y1, labels...
    for x, y, w, h, k in parts:
        if groups:
            last = groups[-1]
            overlap = min(last[2], x + w) - max(last[0], x)
            if overlap > 0.5 * min(last[2] - last[0], w):
                groups[-1] = [min(last[0], x), min(last[1], y), max(last[2], x + w), max(last[3], y + h), *last[4:], k]
                continue
        groups.append([x, y, x + w, y + h, k])
    return [
        Glyph(g[0], g[1], g[2] - g[0], g[3] - g[1], np.isin(labels[g[1] : g[3], g[0] : g[2]], g[4:])) for g in groups
    ]


def _slanted(glyph: Glyph) -> bool:
    """A slash: its ink's top third stands right of its bottom third (never a 1), and its top is a stroke, not a bar
    across it (never a 7)."""
    third = max(1, glyph.h // 3)
    top, bottom = np.nonzero(glyph.ink[:third])[1], np.nonzero(glyph.ink[-third:])[1]
    if not (len(top) and len(bottom)) or float(top.mean() - bottom.mean()) < 0.3 * glyph.w:
        return False
    crown = glyph.ink[: max(1, round(0.15 * glyph.h))].any(axis=0)
    return int(crown.sum()) <= 0.6 * glyph.w


def _pointed(glyph: Glyph) -> bool:
    """Its top is one narrow point near its centre."""
    top = _runs(glyph.ink[: max(1, round(0.15 * glyph.h))].any(axis=0))
    return (
        len(top) == 1
        and top[0][1] - top[0][0] <= 0.35 * glyph.w
        and abs(sum(top[0]) / 2 - glyph.w / 2) <= 0.15 * glyph.w
    )


def _two_feet(runs: list[tuple[int, int]], width: int) -> bool:
    """A row that is two runs, one left of the middle and one right of it (a star's legs, apart)."""
    return len(runs) == 2 and sum(runs[0]) / 2 < 0.45 * width and sum(runs[1]) / 2 > 0.55 * width


def _star_shaped(glyph: Glyph) -> bool:
    """A five-point star: pointed at the top, two legs apart in its bottom rows, its arms (its widest row) in its
    upper half."""
    if not _pointed(glyph):
        return False
    if not any(_two_feet(_runs(row), glyph.w) for row in glyph.ink[round(0.7 * glyph.h) :]):
        return False
    widths = glyph.ink.sum(axis=1)
    arms = int(np.argmax(widths))
    return 0.2 * glyph.h <= arms <= 0.6 * glyph.h and widths[arms] >= 0.85 * glyph.w


def _before_slash(glyphs: list[Glyph], total_digits: int) -> tuple[Glyph, Glyph, float] | None:
    """The glyph before the slash, the total's first glyph and the digits' height, at one threshold; None when no
    slash followed by the total stands at the line's end, or a word gap parts them (no number and total)."""
    tail = glyphs[-(total_digits + 2) :]
    for k in range(len(tail) - 2, 0, -1):
        slash, after = tail[k], tail[k + 1 :]
        digit = float(np.median([g.h for g in after]))
        if len(after) > total_digits or any(abs(g.h - digit) > 0.12 * digit for g in after):
            continue  # what follows is no total: glyphs of another height (the slash itself, a star)
        if slash.w <= 0.8 * slash.h and slash.h >= 0.95 * digit and _slanted(slash):
            break
    else:
        return None
    before = tail[k - 1]
    if slash.x - (before.x + before.w) > WORD_GAP * digit or after[0].x - (slash.x + slash.w) > WORD_GAP * digit:
        return None  # a word gap: this is no number and total
    return before, after[0], digit


def _floating(glyph: Glyph, beside: Glyph, digit: float) -> bool:
    """A compact blob clear of both the top and the baseline of `beside` (a digit `digit` tall): a small star blurred
    to its body, its points lost. A digit stands as tall as the others; a lower-case suffix or a smudge stands on the
    baseline."""
    top, bottom = glyph.y - beside.y, beside.y + beside.h - (glyph.y + glyph.h)
    return (FLOATING[0] * digit <= glyph.h <= FLOATING[1] * digit and 0.75 <= glyph.w / glyph.h <= 1.3
            and min(top, bottom) >= FLOATING[2] * digit)


def _floating_before_total(glyphs: list[Glyph], total_digits: int) -> bool:
    """A floating blob (`_floating`, measured against the digit before it) that ends the number: a digit before it,
    touching or close, and after it, close, a glyph at least as tall (the slash, or the slash blur joined to the
    total), then no more glyphs than the total has digits. For a line whose slash cannot be parted from the total."""
    tail = glyphs[-(total_digits + 3) :]
    for k in range(1, len(tail) - 1):
        digit, blob, after = tail[k - 1], tail[k], tail[k + 1]
        near = WORD_GAP * digit.h
        if (len(tail) - k - 1 <= total_digits + 1 and digit.w <= DIGIT_WIDTH * digit.h and after.h >= 0.95 * digit.h
                and blob.x - (digit.x + digit.w) <= near and after.x - (blob.x + blob.w) <= near
                and _floating(blob, digit, float(digit.h))):
            return True
    return False


def _judge(glyphs: list[Glyph], total_digits: int) -> bool | None:
    """Star (True), digit (False) or unknown (None) for the glyph before the slash, at one threshold."""
    found = _before_slash(glyphs, total_digits)
    if found is None:
        return True if _floating_before_total(glyphs, total_digits) else None
    before, first, digit = found
    if before.w <= DIGIT_WIDTH * digit and abs(before.h - digit) <= 0.07 * digit and not _pointed(before):
        return False
    if _floating(before, first, digit):
        return True
    if 0.75 * digit <= before.w <= 1.3 * digit and 0.8 <= before.w / before.h <= 1.25 and before.h <= 1.25 * digit:
        return True if _star_shaped(before) else None
    return None


def _height(glyphs: list[Glyph], total_digits: int) -> str | None:
    """`X_HEIGHT` or `FULL` for the glyph before the slash, at one threshold, or None (see `end_height`)."""
    found = _before_slash(glyphs, total_digits)
    if found is None:
        return None
    before, first, digit = found
    if before.w > 1.1 * digit or abs(before.y + before.h - (first.y + first.h)) > 0.1 * digit:
        return None  # too wide for one glyph, or off the digits' baseline (a descender, a speck)
    if 0.5 * digit <= before.h <= 0.85 * digit:
        return X_HEIGHT
    if 0.93 * digit <= before.h <= 1.2 * digit and not _pointed(before):
        return FULL
    return None


def _tail_crop(band: BottomBand, block: Block) -> np.ndarray | None:
    """The end of `block`'s last line, scaled to `HEIGHT` pixels a glyph (None when there is nothing to look at)."""
    glyph = band.blocks.glyph
    if glyph <= 0 or not block.lines:
        return None
    line = block.lines[-1]
    margin = max(2, round(0.3 * glyph))
    right = block.left + line.right
    left = max(block.left + line.left, right - round(TAIL * glyph))
    gray = np.asarray(band.image)[
        max(0, line.top - margin) : line.bottom + margin, max(0, left - margin) : right + margin
    ]
    if gray.size == 0:
        return None
    scale = HEIGHT / glyph
    return cv2.resize(gray, None, fx=scale, fy=scale, interpolation=cv2.INTER_CUBIC)


def _agreed(big: np.ndarray, judge: Callable[[list[Glyph]], T | None]) -> T | None:
    """What every threshold that parts the glyphs says, or None when they disagree or none says anything."""
    otsu, _ = cv2.threshold(big, 0, 255, cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU)
    said = {judge(_glyphs(big < otsu * level)) for level in LEVELS} - {None}
    return said.pop() if len(said) == 1 else None


def end_height(band: BottomBand, block: Block, total: int) -> str | None:
    """How tall the glyph before the slash of `block`'s legal line is ("30a/128", whose total `total` was read):
    `X_HEIGHT` (a lower-case letter without ascender: a suffix "a"), `FULL` (a digit, or a letter with an ascender:
    "b"), or None when the thresholds do not agree. Letter-suffix twins ("30a" and "30b", "24" and "24a") differ
    there, and OCR reads a blurred letter as any other."""
    big = _tail_crop(band, block)
    return None if big is None else _agreed(big, lambda glyphs: _height(glyphs, len(str(total))))


def star_before_slash(band: BottomBand, block: Block, total: int) -> bool | None:
    """Whether the number ending `block`'s last line (a legal line's "123★/350", whose total `total` was read)
    carries a star: True or False when every threshold that parts its glyphs says so, else None."""
    big = _tail_crop(band, block)
    return None if big is None else _agreed(big, lambda glyphs: _judge(glyphs, len(str(total))))
