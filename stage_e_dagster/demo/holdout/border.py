"""Sets the held-out scans' bottom-border text where each layout prints it (fractions of the trimmed card, from
real cards; a 672x936 render is the unit the facts were measured in):

- rarity-first and modern: a two-line block at the bottom left, its left edge 4.2-5.6% of the width in, last
  baseline at 96.6-97.3% of the height, digits 0.95-1.3% of the height; the legal line right-aligned on the
  block's last baseline at 0.85 of its size, shrunk until it clears the block.
- legal-number: two left-aligned lines from 7-9% of the width; the legal line's baseline at 96.8-97.3% (its
  digits inside 95.5-97.5%), digits 0.92-1.25%, set condensed or wide so that the number's centre lands at
  41-49% of the width; the artist line above it, 5-25% larger.
- centred: "Illus." over the legal line, both centred on the card's middle (within 1%), the legal line's digits
  0.82-1.02% of the height (the smallest type of any era), its baseline at 95.7-96.6%.
- numberless: "Illus. artist" left-aligned from 6-9%, over a smaller copyright line from Legends on.

A reprint from The List carries a small planeswalker mark at the far left of the border, centred between the
block's two lines.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PIL import Image, ImageDraw

from stage_e_dagster.demo.holdout import type as typeset
from stage_e_dagster.demo.holdout.lines import Printed
from stage_e_dagster.domain.printed_lines import CENTRED, LEGAL_NUMBER, MODERN, NUMBERLESS, RARITY_FIRST

RGB = tuple[int, int, int]
Box = tuple[int, int, int, int]


@dataclass(frozen=True)
class Geometry:
    """A layout's ranges: digit height of the number (or last) line (fraction of the card's height), x (left edge,
    or centre for centred lines; fraction of the width), last baseline (fraction of the height), baseline gap (in
    the upper line's digit heights) and the upper line's size relative to the lower one's."""

    cap: tuple[float, float]
    x: tuple[float, float]
    baseline: tuple[float, float]
    gap: tuple[float, float]
    upper: tuple[float, float]


_BLOCK = Geometry(cap=(0.0095, 0.013), x=(0.042, 0.056), baseline=(0.966, 0.973), gap=(1.45, 1.7), upper=(1.0, 1.0))
GEOMETRY: dict[str, Geometry] = {
    RARITY_FIRST: _BLOCK,
    MODERN: _BLOCK,
    LEGAL_NUMBER: Geometry(cap=(0.0092, 0.0125), x=(0.07, 0.09), baseline=(0.968, 0.973), gap=(1.45, 1.75),
                           upper=(1.05, 1.25)),
    CENTRED: Geometry(cap=(0.0082, 0.0102), x=(0.49, 0.51), baseline=(0.957, 0.966), gap=(1.6, 2.0),
                      upper=(1.0, 1.2)),
    NUMBERLESS: Geometry(cap=(0.009, 0.0125), x=(0.06, 0.09), baseline=(0.952, 0.964), gap=(1.5, 1.9),
                         upper=(1.1, 1.35)),
}
NUMBER_AT = (0.41, 0.49)
"""Where the legal-number layout's number is centred, as a fraction of the width."""


@dataclass(frozen=True)
class Look:
    """How one scan sets its bottom border: faces (the collector lines', the legal line's), digit height of the
    number (or last) line, x, last baseline, gap and upper-line size (see `Geometry`), letter tracking (in digit
    heights), side border width (fraction of the width), ink, and where a legal-number line's number is centred
    when its natural place is outside `NUMBER_AT`."""

    face: str
    legal_face: str
    cap: float
    x: float
    baseline: float
    gap: float
    upper: float
    tracking: float
    border: float
    ink: RGB
    number_at: float = 0.45


@dataclass(frozen=True)
class Drawn:
    """Where the printed lines landed (one box per `Printed.lines` entry; left, top, right, bottom, in pixels of the
    undamaged image), the collector number's own box (None when none is printed), other marks drawn by name
    ("pt", "holofoil", "list"), and the card's rectangle (x, y, width, height) in the image."""

    line_boxes: tuple[Box, ...]
    number_box: Box | None
    marks: tuple[tuple[str, Box], ...]
    card_box: tuple[float, float, float, float]


def _paste(img: Image.Image, text: str, face: str, cap: float, x: float, baseline: float, ink: RGB, *,
           align: str = "left", tracking: float = 0.0, squeeze: float = 1.0, mark: tuple[int, int] | None = None
           ) -> tuple[Box, Box | None]:
    """Set `text` with its pen starting at `x` ("left"), centred on `x` ("centre") or ending at `x` ("right"), on
    `baseline`; return its ink box and the marked span's, in image pixels."""
    line = typeset.set_line(text, face, cap, tracking, squeeze, mark)
    start = x - {"left": 0.0, "centre": line.advance / 2, "right": line.advance}[align]
    ox, oy = round(start - line.origin[0]), round(baseline - line.origin[1])
    img.paste(ink, (ox, oy, ox + line.mask.width, oy + line.mask.height), line.mask)

    def moved(box: Box) -> Box:
        return box[0] + ox, box[1] + oy, box[2] + ox, box[3] + oy

    return moved(line.ink), None if line.mark is None else moved(line.mark)


def _span(printed: Printed, index: int) -> tuple[int, int] | None:
    if printed.number is None or printed.number_line != index:
        return None
    start = printed.lines[index].rfind(printed.number)
    return start, start + len(printed.number)


def planeswalker_mark(img: Image.Image, cx: float, cy: float, height: float, ink: RGB) -> Box:
    """The List's mark: a tall centre spike between two shorter ones over a bowl, centred at (cx, cy)."""
    s = 4
    w, h = height * 0.8, height
    mask = Image.new("L", (max(1, round(w * s)), max(1, round(h * s))), 0)
    draw = ImageDraw.Draw(mask)
    W, H = mask.width, mask.height
    draw.polygon([(W * 0.5, 0), (W * 0.6, H * 0.68), (W * 0.4, H * 0.68)], fill=255)
    for side in (-1, 1):
        tip = W * (0.5 + side * 0.3)
        draw.polygon([(tip, H * 0.2), (tip + side * W * 0.08, H * 0.66), (tip - side * W * 0.1, H * 0.66)], fill=255)
    draw.pieslice((0, H * 0.3, W - 1, H - 1), 0, 180, fill=255)
    draw.pieslice((W * 0.2, H * 0.3, W * 0.8, H * 0.82), 0, 180, fill=0)
    small = mask.resize((max(1, round(w)), max(1, round(h))), Image.Resampling.BOX)
    ox, oy = round(cx - w / 2), round(cy - h / 2)
    img.paste(ink, (ox, oy, ox + small.width, oy + small.height), small)
    return ox, oy, ox + small.width, oy + small.height


def draw_border(img: Image.Image, printed: Printed, look: Look, at: Any, cw: float, ch: float
                ) -> tuple[list[Box], Box | None, list[tuple[str, Box]]]:
    """Draw `printed` where its layout prints it; return each line's box, the number's box and other marks."""
    cap, layout, ink = look.cap * ch, printed.layout, look.ink
    x, base = at(look.x, look.baseline)
    upper_cap = cap * look.upper
    upper_base = base - look.gap * upper_cap
    boxes: list[Box] = []
    number_box: Box | None = None
    marks: list[tuple[str, Box]] = []
    if layout in (MODERN, RARITY_FIRST):
        for index, baseline in ((0, upper_base), (1, base)):
            box, marked = _paste(img, printed.lines[index], look.face, cap, x, baseline, ink,
                                 tracking=look.tracking, mark=_span(printed, index))
            boxes.append(box)
            number_box = marked or number_box
        right = at(1 - look.border - 0.008, 0)[0]
        legal_cap = cap * 0.85
        clear = max(b[2] for b in boxes) + 0.03 * cw
        while right - typeset.line_width(printed.legal, look.legal_face, legal_cap) < clear and legal_cap > cap * 0.5:
            legal_cap *= 0.93
        boxes.append(_paste(img, printed.legal, look.legal_face, legal_cap, right, base, ink, align="right")[0])
        if printed.list_mark:
            middle = (upper_base - cap * 0.5 + base - cap * 0.5) / 2
            marks.append(("list", planeswalker_mark(img, at(0.026, 0)[0], middle, cap * 2.1, ink)))
    elif layout == LEGAL_NUMBER:
        boxes.append(_paste(img, printed.lines[0], look.face, upper_cap, x, upper_base, ink,
                            tracking=look.tracking)[0])
        text, span = printed.lines[1], _span(printed, 1)
        probe = typeset.set_line(text, look.legal_face, cap, look.tracking, 1.0, span)
        assert probe.mark is not None
        natural = (probe.mark[0] + probe.mark[2]) / 2 - probe.origin[0]
        squeeze = 1.0
        if not NUMBER_AT[0] * cw <= x - at(0, 0)[0] + natural <= NUMBER_AT[1] * cw:
            squeeze = min(1.35, max(0.7, (at(look.number_at, 0)[0] - x) / natural))
        box, number_box = _paste(img, text, look.legal_face, cap, x, base, ink, tracking=look.tracking,
                                 squeeze=squeeze, mark=span)
        boxes.append(box)
    elif layout == CENTRED:
        boxes.append(_paste(img, printed.lines[0], look.face, upper_cap, x, upper_base, ink, align="centre",
                            tracking=look.tracking)[0])
        box, number_box = _paste(img, printed.lines[1], look.legal_face, cap, x, base, ink, align="centre",
                                 tracking=look.tracking, mark=_span(printed, 1))
        boxes.append(box)
    else:  # numberless: the credit, with the copyright line under it from Legends on
        credit_base = upper_base if len(printed.lines) > 1 else base
        boxes.append(_paste(img, printed.lines[0], look.face, upper_cap, x, credit_base, ink,
                            tracking=look.tracking)[0])
        if len(printed.lines) > 1:
            boxes.append(_paste(img, printed.lines[1], look.legal_face, cap, x, base, ink)[0])
    return boxes, number_box, marks
