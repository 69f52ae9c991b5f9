"""What the held-out scans print on their bottom border, and in which style.

Old frames print no set code: "42/350" alone, over the artist credit ("Illus. Alba Holm"), or under it. Modern
frames print the number with its rarity letter over the set code and language, usually followed by the
paintbrush and the artist; sets from 2023 on print the number zero-padded with no total ("0042 R"), sometimes
with the rarity letter first ("R 0042"). Basic lands print the rarity letter "L".
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from stage_e_dagster.demo.holdout.catalog import SetEntry

OLD_STYLES = {"number": 0.4, "number-credit": 0.35, "credit-number": 0.25}
MODERN_STYLES = {"code-credit": 0.6, "code": 0.4}
PADDED_STYLES = {"padded": 0.7, "rarity-first": 0.3}


@dataclass(frozen=True)
class Printed:
    """The bottom border's text: the collector block's lines (top to bottom), which of them holds the number,
    whether a set code is printed, the legal line and the artist (credited on the right when no line has it)."""

    style: str
    lines: tuple[str, ...]
    number_line: int
    prints_code: bool
    legal: str
    artist: str


def _pick(rng: random.Random, weights: dict[str, float]) -> str:
    return rng.choices(list(weights), list(weights.values()))[0]


def rarity_letter(card: dict[str, Any]) -> str:
    """The printed rarity letter: L for a basic land, else the first letter of the rarity."""
    if str(card.get("type_line", "")).startswith("Basic"):
        return "L"
    return str(card.get("rarity", "common"))[:1].upper()


def printed_lines(card: dict[str, Any], entry: SetEntry, rng: random.Random) -> Printed:
    """The text a scan of `card` (of set `entry`) prints, in a style drawn from `rng`."""
    number, artist = str(card["collector_number"]), str(card.get("artist", ""))
    year = str(card["released_at"])[:4]
    if not entry.prints_code:
        style = _pick(rng, OLD_STYLES)
        plain, credit = f"{number}/{entry.printed_size}", f"Illus. {artist}"
        lines = {"number": (plain,), "number-credit": (plain, credit), "credit-number": (credit, plain)}[style]
        legal = f"™ & © {year} Wizards of the Coast, Inc."
        return Printed(style, lines, lines.index(plain), False, legal, artist)
    rarity = rarity_letter(card)
    code_line = f"{entry.code.upper()} • {str(card.get('lang', 'en')).upper()}"
    legal = f"™ & © {year} Wizards of the Coast"
    if entry.padded:
        style = _pick(rng, PADDED_STYLES)
        padded = number.zfill(4)
        first = f"{padded} {rarity}" if style == "padded" else f"{rarity} {padded}"
        return Printed(style, (first, f"{code_line} ✎ {artist}"), 0, True, legal, artist)
    style = _pick(rng, MODERN_STYLES)
    second = f"{code_line} ✎ {artist}" if style == "code-credit" else code_line
    return Printed(style, (f"{number}/{entry.printed_size} {rarity}", second), 0, True, legal, artist)
