"""Catalogue values the calculators reason over, decoupled from the ORM rows they are loaded from."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import date


@dataclass(frozen=True)
class PrintingRef:
    """One catalogue printing: `id` is the `printing` table's primary key."""

    id: int
    scryfall_id: str
    name: str
    set_code: str  # lower case, as Scryfall writes it
    collector_number: str
    released_at: date | None = None
    border_color: str | None = None
    frame: str | None = None
    layout: str | None = None  # Scryfall's layout: `token`, `double_faced_token` and `emblem` make token printings
    set_type: str | None = None  # Scryfall's set type of its set, when the catalogue knows it (`token`: a token set)


@dataclass(frozen=True)
class ExpansionRef:
    """A set: its code (lower case), release date, reference set-symbol phash (signed 64-bit) and printed total
    ("/274", from Scryfall's sets list) if known."""

    code: str
    released_at: date | None = None
    symbol_phash: int | None = None
    printed_total: int | None = None


@dataclass(frozen=True)
class CardRef:
    """A scan as the calculators see it: its id, the name and expansion hint parsed from its file name, its kind
    (`domain.kinds.KINDS`) and the work rule's reason no machine may vote on it (None: machines may)."""

    id: int
    name: str
    expansion_hint: str | None = None
    kind: str = "card"
    ineligible: str | None = None


def normalise_name(name: str) -> str:
    """Case-, accent- and punctuation-insensitive form of a card name, for matching scans to printings."""
    decomposed = unicodedata.normalize("NFKD", name)
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return re.sub(r"[^a-z0-9]+", " ", stripped.lower()).strip()
