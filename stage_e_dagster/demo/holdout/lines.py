"""What the held-out scans print on their bottom border, layout by layout (`domain.printed_lines` names them).

- rarity-first (frame 2015 from 2023-04-21): "C 0172" over "DSK • EN ✎ artist"; the legal line
  "™ & © 2024 Wizards of the Coast" on the right.
- modern (frame 2015 before): "171/274 C" ("078/221 M" in zero-padding sets, "GR6/24 R" with a prefix) over
  "BFZ • EN ✎ artist"; the legal line on the right.
- legal-number (frame 2003): the artist ("✎ artist", or "Illus. artist" in the frame's first years) over the legal
  line ending in the number: "™ & © 2012 Wizards of the Coast 174/274" ("™ & © 1993-2003 Wizards of the Coast,
  Inc. 316/350" on early core sets, "LLC" in 2009-2011).
- centred (frame 1997 from Exodus): "Illus. artist" over "© 1999 Wizards of the Coast, Inc. 123/350" ("™ &" from
  Invasion on).
- numberless (frame 1993, and 1997 before Exodus): "Illus. artist", and from Legends a copyright line
  "© 1995 Wizards of the Coast, Inc." under it.

Premium printings of the old numbered frames carry their star in the number ("123★/350"); a premium copy of a
modern-frame printing separates set and language by a star ("M19 ★ EN"); a reprint from The List carries a
planeswalker mark (drawn by the renderer). Basic lands print the rarity letter "L".
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from datetime import date
from typing import Any

from stage_e_dagster.demo.holdout.catalog import STAR, SetEntry
from stage_e_dagster.domain.printed_lines import CENTRED, LEGAL_NUMBER, MODERN, NUMBERLESS, RARITY_FIRST

LEGENDS = date(1994, 6, 1)
"""From Legends on, cards print a copyright year."""
INVASION = date(2000, 10, 2)
"""From Invasion on, the legal line starts with "™ &"."""
BRUSH_FROM = date(2005, 10, 7)
"""From about Ravnica the 2003 frame credits the artist after a paintbrush; before, after "Illus."."""
PREMIUM_MODERN = 0.12
"""Share of modern-frame scans that show a premium (foil) copy: "M19 ★ EN"."""
LIST_MARK = 0.05
"""Share of modern-frame scans that show a reprint from The List (a planeswalker mark at the far left)."""


@dataclass(frozen=True)
class Printed:
    """The bottom border's text: every line drawn, in the layout's order (`render` places them by layout), which
    line holds the collector number and the number as it is printed there (None when none is), whether a set code
    is printed, the legal text, the artist, and the variants on top of the layout."""

    layout: str
    style: str
    lines: tuple[str, ...]
    number_line: int | None
    number: str | None
    prints_code: bool
    legal: str
    artist: str
    premium: bool = False
    list_mark: bool = False

    @property
    def suffix(self) -> bool:
        """Whether the printed number carries a letter after its digits ("57a/350")."""
        return self.number is not None and re.match(r"^[A-Z]*\d+[a-z]", self.number) is not None

    @property
    def prefix(self) -> bool:
        """Whether the printed number carries letters before its digits ("GR6/24")."""
        return self.number is not None and self.number[:1].isalpha()


def rarity_letter(card: dict[str, Any]) -> str:
    """The printed rarity letter: L for a basic land, else the first letter of the rarity."""
    if str(card.get("type_line", "")).startswith("Basic"):
        return "L"
    return str(card.get("rarity", "common"))[:1].upper()


def _split(number: str) -> tuple[str, str, str]:
    """("GR", "6", "") of "GR6", ("", "57", "a") of "57a", ("", "123", "★") of "123★"."""
    found = re.match(r"^([A-Za-z]*)(\d+)(.*)$", number)
    return (found.group(1), found.group(2), found.group(3)) if found else ("", number, "")


def legal_text(entry: SetEntry) -> str:
    """The legal line's words (without the number) for a printing of `entry`; "" where none is printed."""
    day, year = entry.released_at, entry.released_at.year
    if entry.layout == NUMBERLESS:
        return f"© {year} Wizards of the Coast, Inc." if day >= LEGENDS else ""
    span = f"1993-{year}" if entry.core and year < 2009 else str(year)
    if entry.layout == CENTRED:
        return f"{'™ & ' if day >= INVASION else ''}© {span} Wizards of the Coast, Inc."
    if entry.layout == LEGAL_NUMBER:
        return f"™ & © {span} Wizards of the Coast{', Inc.' if year < 2009 else ' LLC' if year < 2012 else ''}"
    return f"™ & © {year} Wizards of the Coast"


def printed_number(card: dict[str, Any], entry: SetEntry) -> str | None:
    """The collector number as the card prints it: "0172", "078/221", "GR6/24", "123★/350"; None if numberless."""
    prefix, digits, tail = _split(str(card["collector_number"]))
    total = str(entry.printed_size)
    if entry.layout == NUMBERLESS:
        return None
    if entry.layout == RARITY_FIRST:
        return f"{prefix}{digits.zfill(4)}{tail}"
    if entry.layout == MODERN and entry.padded:
        return f"{prefix}{digits.zfill(3)}{tail}/{total.zfill(3)}"
    return f"{prefix}{digits}{tail}/{total}"


def printed_lines(card: dict[str, Any], entry: SetEntry, rng: random.Random) -> Printed:
    """The text a scan of `card` (of set `entry`) prints; `rng` draws the scan's variants."""
    artist, layout = str(card.get("artist", "")), entry.layout
    number, legal = printed_number(card, entry), legal_text(entry)
    premium = STAR in str(card["collector_number"])
    if layout in (RARITY_FIRST, MODERN):
        rarity = rarity_letter(card)
        premium = rng.random() < PREMIUM_MODERN
        code_line = f"{entry.code.upper()} {STAR if premium else '•'} {str(card.get('lang', 'en')).upper()} ✎ {artist}"
        first = f"{rarity} {number}" if layout == RARITY_FIRST else f"{number} {rarity}"
        return Printed(layout, layout, (first, code_line, legal), 0, number, True, legal, artist, premium,
                       rng.random() < LIST_MARK)
    if layout == LEGAL_NUMBER:
        brush = entry.released_at >= BRUSH_FROM
        credit = f"✎ {artist}" if brush else f"Illus. {artist}"
        return Printed(layout, "brush" if brush else "illus", (credit, f"{legal} {number}"), 1, number, False, legal,
                       artist, premium)
    if layout == CENTRED:
        return Printed(layout, layout, (f"Illus. {artist}", f"{legal} {number}"), 1, number, False, legal, artist,
                       premium)
    lines = (f"Illus. {artist}", legal) if legal else (f"Illus. {artist}",)
    return Printed(layout, "copyright" if legal else "credit", lines, None, None, False, legal, artist)
