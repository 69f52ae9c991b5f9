"""The bottom border of a rendered card as real cards print it, era by era (`domain.printed_lines`).

Positions are fractions of the trim rectangle (x of its width, y of its height; y is a baseline) and type sizes
are digit heights as a fraction of its height, as measured on real cards (a 672x936 render prints its collector
digits 9-11 px high):

- rarity first (2023 on) and modern (2015 frame): "C 0172" or "171/274 C" (zero-padded from 2018: "078/221 M") over
  "DSK • EN ✎ artist" at 4.5% from the left, baselines at 95.4% and 97.3%; the legal line right-aligned on the
  second baseline; a holofoil oval at the bottom centre of rares and mythics (drawn by the renderer). A premium
  (foil) scan separates set and language by a star: "M19 ★ EN".
- legal number (2003 frame): "✎ artist" (or "Illus. artist") over "™ & © 2012 Wizards of the Coast 174/274", both
  from 8% of the width, the legal line's baseline at 97.2%, set so that the number starts at 40-50% of the width.
- centred (1997 frame from Exodus): "Illus. artist" over "© 1999 Wizards of the Coast, Inc. 123/350" ("™ & " from
  Invasion), small and centred.
- numberless: the 1993 frame centres "Illus. artist" (and, from Legends, "© 1995 Wizards of the Coast, Inc." under
  it); the 1997 frame before Exodus sets the credit at the left and the copyright at the right, on one line.

On top of any era a scan may be of a reprint from The List (a small planeswalker mark at the far left of the
border, `InfoStyle.list_mark`); premium printings of the 1997 and 2003 frames carry a star after their number
("123★/350", it is part of the printing's number); suffixes ("12a", "12s") and prefixes ("A-12") print as the
number does.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

from PIL import ImageDraw

from stage_e_dagster.demo.text import draw_text, fit_font, text_width
from stage_e_dagster.domain import layout, printed_lines
from stage_e_dagster.domain.printed_lines import CENTRED, LEGAL_NUMBER, MODERN, NUMBERLESS, RARITY_FIRST

RGB = tuple[int, int, int]
ZERO_PADDED_FROM = date(2018, 1, 1)
"""Modern sets from this day print three-digit numbers zero-padded ("078/221 M")."""
TRADEMARK_FROM = date(2000, 10, 2)
"""Invasion: the legal line starts "™ &" from here on."""
COPYRIGHT_YEAR_FROM = date(1994, 6, 1)
"""Legends: the first set printing a copyright year."""
CAPS: dict[str, float] = {RARITY_FIRST: 0.0108, MODERN: 0.0108, LEGAL_NUMBER: 0.0112, CENTRED: 0.0095,
                          NUMBERLESS: 0.0100}
"""Each layout's digit height, fraction of the trim height."""
FRAME_BOTTOM: dict[str, float] = {RARITY_FIRST: 0.936, MODERN: 0.936, LEGAL_NUMBER: 0.93, CENTRED: 0.928,
                                  NUMBERLESS: 0.928}
"""Where each layout's coloured frame ends and the bottom border begins (fraction of the trim height)."""
COLLECTOR_TEXT_HEIGHT = CAPS[MODERN]


@dataclass(frozen=True)
class InfoStyle:
    """How one scan sets its bottom border: font file (None: bundled), type size relative to the era's real size,
    offset of the lines (fractions of the trim width and height), how a 2003-frame credit starts ("brush" or
    "illus"), The List's planeswalker mark, and a premium (foil) print's star separator on modern frames."""

    font: str | None = None
    size: float = 1.0
    offset: tuple[float, float] = (0.0, 0.0)
    credit: str = "brush"
    list_mark: bool = False
    foil: bool = False

    def __post_init__(self) -> None:
        if self.credit not in ("brush", "illus"):
            raise ValueError(f"unknown credit {self.credit!r}; choose 'brush' or 'illus'")


def layout_of_card(card: dict[str, Any]) -> str:
    """The layout a catalogue card prints (`printed_lines.layout_of`; a card of unknown frame prints the modern
    one)."""
    released = date.fromisoformat(str(card["released_at"])[:10]) if card.get("released_at") else None
    return printed_lines.layout_of(str(card.get("frame") or "2015"), released) or MODERN


def _released(card: dict[str, Any]) -> date:
    return date.fromisoformat(str(card["released_at"])[:10])


def _rarity(card: dict[str, Any]) -> str:
    if str(card.get("type_line", "")).startswith("Basic Land"):
        return "L"
    return str(card.get("rarity", "common"))[:1].upper()


def _numbered(number: str, total: int, padded: bool) -> str:
    """ "123/280", zero-padded to three digits when the set pads ("078/221"), a suffix kept where it is."""
    digits = len(number) - len(number.lstrip("0123456789"))
    if padded and 0 < digits < 3:
        number = number.zfill(len(number) + 3 - digits)
    return f"{number}/{total:03d}" if padded else f"{number}/{total}"


def collector_lines(card: dict[str, Any], set_printed_total: int, style: InfoStyle = InfoStyle()
                    ) -> tuple[str, str | None]:
    """The collector block at the bottom left as printed: ("171/274 C", "BFZ • EN ✎ artist") on modern frames,
    ("C 0172", "DSK • EN ✎ artist") from 2023; ("", None) on the other layouts, which print their number on the
    legal line (`legal_lines`)."""
    kind = layout_of_card(card)
    if kind not in (MODERN, RARITY_FIRST):
        return "", None
    number = str(card["collector_number"])
    artist = str(card.get("artist", "Unknown"))
    separator = "★" if style.foil else "•"
    second = f"{str(card['set']).upper()} {separator} {str(card.get('lang', 'en')).upper()} ✎ {artist}"
    if kind == RARITY_FIRST:
        digits = len(number) - len(number.lstrip("0123456789"))
        return f"{_rarity(card)} {number.zfill(len(number) + 4 - digits) if digits < 4 else number}", second
    padded = _released(card) >= ZERO_PADDED_FROM
    return f"{_numbered(number, set_printed_total, padded)} {_rarity(card)}", second


def legal_lines(card: dict[str, Any], set_printed_total: int, marker: str | None, style: InfoStyle = InfoStyle()
                ) -> tuple[str | None, str | None]:
    """(credit line, legal line) of the layouts whose credit is not in the collector block: the 2003 frame's
    "✎ artist" over "™ & © 2012 Wizards of the Coast 174/274", the centred "Illus. artist" over "© 1999 Wizards
    of the Coast, Inc. 123/350", the numberless credit and copyright; (None, legal) on modern frames, whose legal
    line sits at the right. `marker` ("PROXY", "NOT FOR SALE") takes the trademark's place on a proxy."""
    kind = layout_of_card(card)
    released = _released(card)
    year = released.year
    artist = str(card.get("artist", "Unknown"))
    owner = "Wizards" if marker else "Wizards of the Coast"
    lead = f"{marker} © " if marker else "™ & © "
    if kind in (MODERN, RARITY_FIRST):
        return None, f"{lead}{year} {owner}"
    number = str(card["collector_number"])
    if kind == LEGAL_NUMBER:
        years = f"1993-{year}" if year < 2005 and not marker else str(year)
        inc = ", Inc." if year < 2005 and not marker else ""
        credit = f"✎ {artist}" if style.credit == "brush" else f"Illus. {artist}"
        return credit, f"{lead}{years} {owner}{inc} {number}/{set_printed_total}"
    if kind == CENTRED:
        lead = lead if marker or released >= TRADEMARK_FROM else "© "
        return f"Illus. {artist}", f"{lead}{year} {owner}{'' if marker else ', Inc.'} {number}/{set_printed_total}"
    lead = f"{marker} © " if marker else "© "
    copyright = f"{lead}{year} {owner}{'' if marker else ', Inc.'}" if released >= COPYRIGHT_YEAR_FROM else None
    return f"Illus. {artist}", copyright


def draw_info_lines(draw: ImageDraw.ImageDraw, trim: layout.TrimRect, card: dict[str, Any], set_printed_total: int,
                    marker: str | None, ink: RGB, style: InfoStyle = InfoStyle()) -> None:
    """Draw the card's bottom border lines in `ink`, where its layout prints them."""
    kind = layout_of_card(card)
    th, tw = trim.height, trim.width
    cap = th * CAPS[kind] * style.size
    dx, dy = style.offset[0] * tw, style.offset[1] * th

    def x_at(fx: float) -> float:
        return trim.left + fx * tw + dx

    def y_at(fy: float) -> float:
        return trim.top + fy * th + dy

    def font_for(text: str, width: float) -> Any:
        return fit_font(text, cap, width, style.font)

    credit, legal = legal_lines(card, set_printed_total, marker, style)
    if kind in (MODERN, RARITY_FIRST):
        first, second = collector_lines(card, set_printed_total, style)
        font = font_for(first, 0.4 * tw)
        assert legal is not None and second is not None
        legal_font = font_for(legal, 0.42 * tw)
        right = x_at(0.955)
        legal_left = right - text_width(legal, legal_font)
        draw_text(draw, legal_left, y_at(0.9735), legal, legal_font, ink)
        left = x_at(0.045)
        while len(second) > 1 and left + text_width(second, font) > legal_left - 0.015 * tw:
            second = second[:-1].rstrip()  # a long artist credit stops short of the legal line, as on real cards
        draw_text(draw, left, y_at(0.9545), first, font, ink)
        draw_text(draw, left, y_at(0.9735), second, font, ink)
        if style.list_mark:
            _list_mark(draw, x_at(0.018), y_at(0.9735), cap * 2.2, ink)
        return
    if kind == LEGAL_NUMBER:
        assert credit is not None and legal is not None
        prefix = legal.rsplit(" ", 1)[0] + " "
        font = fit_font(prefix, cap, 0.36 * tw, style.font)  # the number starts at 40-50% of the width
        left = x_at(0.08)
        draw_text(draw, left, y_at(0.947), credit, font, ink)
        draw_text(draw, left, y_at(0.972), legal, font, ink)
        if style.list_mark:
            _list_mark(draw, x_at(0.03), y_at(0.972), cap * 2.2, ink)
        return
    lines = [text for text in (credit, legal) if text]
    font = min((fit_font(text, cap, 0.8 * tw, style.font) for text in lines), key=lambda f: f.size)
    if kind == CENTRED or str(card.get("frame")) == "1993":
        for text, fy in zip(lines, (0.948, 0.967), strict=False):
            draw_text(draw, trim.left + tw / 2 + dx - text_width(text, font) / 2, y_at(fy), text, font, ink)
        return
    # numberless 1997 frame (Mirage to Stronghold): credit at the left, copyright at the right, one line
    draw_text(draw, x_at(0.06), y_at(0.962), lines[0], font, ink)
    if len(lines) > 1:
        draw_text(draw, x_at(0.94) - text_width(lines[1], font), y_at(0.962), lines[1], font, ink)


def _list_mark(draw: ImageDraw.ImageDraw, x: float, baseline: float, height: float, ink: RGB) -> None:
    """The List's small planeswalker mark: a tall centre spike between two shorter ones on a round base."""
    w = height * 0.55
    top = baseline - height
    base = baseline - height * 0.22
    draw.polygon([(x + w * 0.42, base), (x + w * 0.5, top), (x + w * 0.58, base)], fill=ink)
    draw.polygon([(x + w * 0.08, base), (x + w * 0.18, top + height * 0.3), (x + w * 0.32, base)], fill=ink)
    draw.polygon([(x + w * 0.68, base), (x + w * 0.82, top + height * 0.3), (x + w * 0.92, base)], fill=ink)
    draw.ellipse((x, base - height * 0.08, x + w, baseline), fill=ink)
