"""The bottom lines of a rendered card: collector line (bottom left), artist credit and legal line.

`InfoStyle()` draws them as the demo always has: the bundled font, "123/280 R" over "M20 • EN" at the left (number
only on older frames) and "Illus. <artist>" over the legal line at the right. The harder test data (`demo.hard`)
varies the font, type size and offset, and uses two more layouts seen on real cards:

- "credit": the artist credit follows the set code after a paintbrush: "123/280 R" over "M20 • EN ✎ Anna Chen";
- "old-style": an older frame's number over its artist credit: "42/280" over "Illus. Anna Chen".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PIL import ImageDraw

from stage_e_dagster.demo.text import digit_height, draw_text, fit_font, text_width
from stage_e_dagster.domain import layout

RGB = tuple[int, int, int]
COLLECTOR_TEXT_HEIGHT = 0.026  # collector-line digit height, fraction of the trim height
LAYOUTS = ("demo", "credit", "old-style")


@dataclass(frozen=True)
class InfoStyle:
    """How the bottom lines are drawn: font file (None: bundled), digit height relative to the demo's, offset of
    the collector line (fractions of the trim width and height) and layout (one of `LAYOUTS`)."""

    font: str | None = None
    size: float = 1.0
    offset: tuple[float, float] = (0.0, 0.0)
    layout: str = "demo"

    def __post_init__(self) -> None:
        if self.layout not in LAYOUTS:
            raise ValueError(f"unknown layout {self.layout!r}; choose one of {', '.join(LAYOUTS)}")


def collector_lines(card: dict[str, Any], set_printed_total: int, style: InfoStyle = InfoStyle()
                    ) -> tuple[str, str | None]:
    """The collector line as printed, e.g. ("123/280 R", "M20 • EN", or "M20 • DE" for a German card); older frames
    ("1997", "2003") print the number only: ("123/280", None), or ("123/280", "Illus. <artist>") in the old-style
    layout; the oldest ("1993") none: ("", None)."""
    if card.get("frame") == "1993":
        return "", None  # printed before collector numbers: only the artist and the copyright year
    number = f"{card['collector_number']}/{set_printed_total}"
    artist = str(card.get("artist", "Unknown"))
    if card.get("frame") in ("1997", "2003"):
        return number, (f"Illus. {artist}" if style.layout == "old-style" else None)
    rarity = str(card.get("rarity", "common"))[:1].upper()
    second = f"{str(card['set']).upper()} • {str(card.get('lang', 'en')).upper()}"
    if style.layout == "credit":
        second += f" ✎ {artist}"
    return f"{number} {rarity}", second


def credit_on_the_right(card: dict[str, Any], style: InfoStyle) -> bool:
    """Whether "Illus. <artist>" is drawn above the legal line (not when the collector line carries it)."""
    if card.get("frame") == "1993":
        return True
    old = card.get("frame") in ("1997", "2003")
    return not (style.layout == "credit" and not old) and not (style.layout == "old-style" and old)


def draw_info_lines(draw: ImageDraw.ImageDraw, trim: layout.TrimRect, card: dict[str, Any], set_printed_total: int,
                    legal: str, ink: RGB, style: InfoStyle = InfoStyle()) -> None:
    """Draw the collector line, the artist credit and the legal line in `ink` on the card's bottom border."""
    th = trim.height
    cbox = trim.crop_box(layout.COLLECTOR_LINE)
    line1, line2 = collector_lines(card, set_printed_total, style)
    digit = th * COLLECTOR_TEXT_HEIGHT * style.size
    if style == InfoStyle():
        fits = (line1 or "0", line2 or line1 or "0")
        cfont = min((fit_font(t, digit, cbox[2] - cbox[0]) for t in fits), key=lambda f: f.size)
        cap = cfont.size * digit_height(None)
    else:  # a line with the artist credit may run past the box, as on real cards; only line 1 must fit
        cfont = fit_font(line1 or "0", digit, cbox[2] - cbox[0], style.font)
        cap = cfont.size * digit_height(style.font)
    left = cbox[0] + style.offset[0] * trim.width
    base1 = cbox[1] + th * 0.004 + cap + style.offset[1] * th
    lines = [(layout.LEGAL_LINE, legal)]
    if credit_on_the_right(card, style):
        lines.insert(0, (layout.ILLUS_LINE, f"Illus. {card.get('artist', 'Unknown')}"))
    legal_left = float(trim.width + trim.left)
    for box, text in lines:
        px = trim.crop_box(box)
        font = fit_font(text, th * 0.02 * min(1.0, style.size), px[2] - px[0] - th * 0.004, style.font)
        right = px[2] - th * 0.004
        legal_left = min(legal_left, right - text_width(text, font))
        draw_text(draw, right - text_width(text, font), px[3] - th * 0.009, text, font, ink)
    if line1:
        draw_text(draw, left, base1, line1, cfont, ink)
    if line2 is not None:
        gap = th * 0.038 if style == InfoStyle() else max(th * 0.038 * style.size, cap * 1.45)
        while len(line2) > 1 and left + text_width(line2, cfont) > legal_left - th * 0.01:
            line2 = line2[:-1].rstrip()  # a long artist credit stops short of the legal line, as on real cards
        draw_text(draw, left, base1 + gap, line2, cfont, ink)
