"""What a printing's bottom border prints, by Scryfall frame and release date: the collector-line layouts.

Real cards print their collector number in four places, era by era (and none before Exodus):

- `RARITY_FIRST` (frame "2015" from March of the Machine, 2023-04-21): "C 0172" over "DSK • EN ✎ artist" at the
  bottom left; rarity letter first, four digits, no printed total; the legal line on the right.
- `MODERN` (frame "2015" from Magic 2015 until then): "171/274 C" (often zero-padded, "078/221 M") over
  "BFZ • EN ✎ artist" at the bottom left; the legal line on the right; premium printings separate set and language
  by a star ("M19 ★ EN").
- `LEGAL_NUMBER` (frame "2003": 8th Edition to Journey into Nyx): two left-aligned lines from about 8% of the width,
  the artist, then the legal line ending in the number: "™ & © 2012 Wizards of the Coast 174/274". No set code,
  rarity or language.
- `CENTRED` (frame "1997" from Exodus, June 1998, to Scourge): "Illus. artist" over "© 1999 Wizards of the Coast,
  Inc. 123/350", small and centred ("™ &" from Invasion on).
- `NUMBERLESS` (frame "1993", and frame "1997" before Exodus): no number; "Illus. artist" and, from Legends, a
  copyright year. The era calculator's case.

Scryfall has no field for the layout: it follows from `frame` and `released_at` (a 2023+ printing is still frame
"2015"). Every reader of the bottom border and both scan renderers take the layout from here.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date

RARITY_FIRST = "rarity-first"
MODERN = "modern"
LEGAL_NUMBER = "legal-number"
CENTRED = "centred"
NUMBERLESS = "numberless"
LAYOUTS = (RARITY_FIRST, MODERN, LEGAL_NUMBER, CENTRED, NUMBERLESS)
"""Every layout, newest first."""
NUMBERED_LAYOUTS = (RARITY_FIRST, MODERN, LEGAL_NUMBER, CENTRED)
CODE_LAYOUTS = (RARITY_FIRST, MODERN)
"""The layouts that print a set code (and a language and rarity)."""

NUMBERED_FROM = date(1998, 6, 1)
"""Printings released from this day on print a collector number (Exodus, June 1998, was the first set)."""
RARITY_FIRST_FROM = date(2023, 4, 21)
"""March of the Machine's release: its printings and every later one put the rarity first, four digits, no total."""
MODERN_FRAMES = ("2015", "future")
OLD_FRAMES = ("1993", "1997")
"""The frames of the cards printed before collector numbers (and of the centred numbered ones that followed)."""


def layout_of(frame: str | None, released_at: date | None) -> str | None:
    """The collector-line layout a printing of `frame` released on `released_at` prints; None when unknown."""
    if frame in MODERN_FRAMES:
        if released_at is None:
            return None
        return RARITY_FIRST if released_at >= RARITY_FIRST_FROM else MODERN
    if frame == "2003":
        return LEGAL_NUMBER
    if frame == "1993":
        return NUMBERLESS
    if frame == "1997":
        if released_at is None:
            return None
        return CENTRED if released_at >= NUMBERED_FROM else NUMBERLESS
    return None


def fits(read: str | None, printed: str | None) -> bool:
    """Whether a printing of layout `printed` may be what a reading of layout `read` saw (either unknown: yes). A
    code layout (modern, rarity first) fits either code layout: the two differ by a total OCR may lose. A number on
    a centred legal line fits only the centred layout; one on a legal line at the left fits either legal layout (a
    long centred line may start far left)."""
    if read is None or printed is None:
        return True
    if read in CODE_LAYOUTS:
        return printed in CODE_LAYOUTS
    if read == CENTRED:
        return printed == CENTRED
    if read == LEGAL_NUMBER:
        return printed in (LEGAL_NUMBER, CENTRED)
    return printed == read


def prints_set_code(layout: str | None) -> bool:
    """Whether a layout prints the set code (unknown: assume it may)."""
    return layout is None or layout in CODE_LAYOUTS


def layout_bits(layouts: Iterable[str | None]) -> int:
    """A small bit set of layouts (unknown ones included as every layout), for packing per set."""
    bits = 0
    for layout in layouts:
        bits |= (1 << len(LAYOUTS)) - 1 if layout is None else 1 << LAYOUTS.index(layout)
    return bits


def layouts_in(bits: int) -> tuple[str, ...]:
    """The layouts of a bit set made by `layout_bits`, newest first."""
    return tuple(layout for index, layout in enumerate(LAYOUTS) if bits >> index & 1)
