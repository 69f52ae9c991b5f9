"""A Scryfall-shaped catalogue with the quirks of the real one, for the held-out scans.

Written apart from `demo.catalog` (it shares only the card objects' shape). What it has because the real catalogue
has it:

- many sets of uneven size (supplements of 80-160 cards, expansions of 250-400), with printed totals that are
  not the number of printings the snapshot holds;
- about 57% of printings in old frames (1993, 1997, 2003), whose collector line prints "42/350" and no set code;
- the five basic lands printed one to four times in most sets, numbered together at the end of the set, so one
  name has hundreds of printings, several in one set, and numbers one apart in the same set;
- modern sets from 2023 on print the number zero-padded with no total ("0042"), and a few modern printings sit
  above the set's printed total (box toppers, showcase cards);
- companion sets whose code is the parent's with a trailing "C" (NEO / NEC), core sets coded "M" plus two digits,
  reprints of a name across sets under other numbers, double-faced names.
"""

from __future__ import annotations

import hashlib
import random
import uuid
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

BASICS = ("Plains", "Island", "Swamp", "Mountain", "Forest")
OLD_FRAMES = ("1993", "1997", "2003")
PADDED_FROM = date(2023, 1, 1)
"""Modern sets released on or after this print "0042" (four digits, no printed total)."""

_SYLLABLES = ("ka", "ro", "vel", "mir", "tor", "sa", "quin", "dra", "bel", "zu", "an", "the", "lor", "gar", "ith",
              "mon", "ne", "por", "ul", "vy", "cor", "es", "fal", "hy")
_TITLES = ("Warden", "Oracle", "Hound", "Spire", "Edict", "Harvest", "Colossus", "Whisper", "Vanguard", "Rite",
           "Sentry", "Tide", "Ember", "Covenant", "Lancer", "Mystic", "Behemoth", "Shard", "Pilgrim", "Bastion",
           "Raptor", "Cipher", "Torrent", "Reliquary", "Skald", "Gloom", "Beacon", "Marauder")
_EPITHETS = ("Ashen", "Gleaming", "Hollow", "Brazen", "Sunken", "Veiled", "Feral", "Radiant", "Grim", "Verdant",
             "Frozen", "Errant", "Molten", "Silent", "Tattered", "Vast", "Cunning", "Wretched", "Lucid", "Thorny")
_ARTISTS_FIRST = ("Alba", "Bogdan", "Chiara", "Desmond", "Esther", "Fumiko", "Gideon", "Halvard", "Iris", "Joaquin",
                  "Kamala", "Luis", "Mirela", "Nikolai", "Odette", "Pavel", "Rhea", "Soren", "Tomasz", "Yusuf")
_ARTISTS_LAST = ("Achterberg", "Baptiste", "Castellanos", "Dvorak", "Esposito", "Fairweather", "Grunwald", "Holm",
                 "Iwata", "Jablonski", "Kerrigan", "Lachance", "Mbeki", "Novak", "Oyelaran", "Pemberton", "Ruiz",
                 "Szabo", "Thorne", "Wojcik")
_TYPES = ("Creature — Elf Druid", "Creature — Human Soldier", "Creature — Horror", "Instant", "Sorcery",
          "Enchantment", "Artifact — Equipment", "Legendary Creature — Dragon", "Creature — Merfolk Rogue",
          "Enchantment — Aura", "Artifact")
_RARITIES = ("common", "uncommon", "rare", "mythic")


@dataclass(frozen=True)
class SetEntry:
    """One set of the catalogue, as Scryfall's set list gives it."""

    code: str
    name: str
    released_at: date
    printed_size: int
    frame: str

    @property
    def prints_code(self) -> bool:
        """Whether this set's collector line prints its set code (modern frames only)."""
        return self.frame not in OLD_FRAMES

    @property
    def padded(self) -> bool:
        """Whether the number is printed zero-padded to four digits with no total."""
        return self.prints_code and self.released_at >= PADDED_FROM


@dataclass(frozen=True)
class Catalogue:
    """The printings (Scryfall card objects) and the sets they belong to, by code."""

    cards: list[dict[str, Any]]
    sets: dict[str, SetEntry]


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 3))).capitalize()


def _codes(rng: random.Random, count: int, modern: list[bool]) -> list[str]:
    """Set codes: mostly three letters, some core-set "M" + digits, some with a digit, companions ending in C."""
    taken: set[str] = set()
    codes: list[str] = []
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    core = 10
    while len(codes) < count:
        roll = rng.random()
        if roll < 0.1 and modern[len(codes)]:
            core += rng.randint(1, 3)
            code = f"M{core % 100:02d}"
        elif roll < 0.2:
            code = rng.choice(letters) + str(rng.randint(1, 9)) + rng.choice(letters)
        elif roll < 0.27 and codes and modern[len(codes)] and len(codes[-1]) == 3 and codes[-1][-1] != "C":
            code = codes[-1][:2] + "C"  # the companion set of the one before
        elif roll < 0.32:
            code = "".join(rng.choice(letters) for _ in range(4))
        else:
            code = "".join(rng.choice(letters) for _ in range(3))
        if code not in taken:
            taken.add(code)
            codes.append(code)
    return codes


def _dates(rng: random.Random, count: int, old_share: float) -> list[date]:
    old = round(count * old_share)
    early = [date(1994, 1, 1) + timedelta(days=rng.randrange((date(2014, 6, 1) - date(1994, 1, 1)).days))
             for _ in range(old)]
    late = [date(2015, 2, 1) + timedelta(days=rng.randrange((date(2025, 9, 1) - date(2015, 2, 1)).days))
            for _ in range(count - old)]
    return sorted(early) + sorted(late)


def _frame(day: date) -> str:
    if day.year < 1997:
        return "1993"
    return "1997" if day.year < 2003 else "2003" if day.year < 2015 else "2015"


def _basic_numbers(total: int, copies: int) -> dict[str, list[int]]:
    """The basics' numbers at the end of a set: each land's copies together, Plains first, Forest last."""
    first = total - copies * len(BASICS) + 1
    return {land: [first + k * copies + i for i in range(copies)] for k, land in enumerate(BASICS)}


def _card(rng: random.Random, entry: SetEntry, name: str, number: str, rarity: str, artist: str, type_line: str,
          border: str) -> dict[str, Any]:
    return {
        "object": "card", "id": _uuid(rng), "name": name, "lang": "en",
        "released_at": entry.released_at.isoformat(), "layout": "transform" if " // " in name else "normal",
        "mana_cost": "" if type_line.startswith("Basic") else rng.choice(("{1}{G}", "{2}{U}", "{B}{B}", "{3}{R}",
                                                                           "{W}", "{4}", "{2}{W}{U}")),
        "type_line": type_line, "set": entry.code.lower(), "set_name": entry.name, "collector_number": number,
        "rarity": rarity, "artist": artist, "border_color": border, "frame": entry.frame,
    }


def holdout_catalog(printings: int = 3000, seed: int = 0, old_share: float = 0.57) -> Catalogue:
    """About `printings` printings over about one set per 45 printings, `old_share` of them in old frames."""
    rng = random.Random(f"holdout-catalogue:{seed}")
    n_sets = max(8, printings // 45)
    days = _dates(rng, n_sets, old_share)
    codes = _codes(rng, n_sets, [day.year >= 2015 for day in days])
    entries = []
    for code, day in zip(codes, days, strict=True):
        size = rng.choice((rng.randint(80, 165), rng.randint(180, 300), rng.randint(250, 400)))
        entries.append(SetEntry(code.lower(), f"{_word(rng)} {rng.choice(_TITLES)}s", day, size, _frame(day)))
    # Each kind of set (old, modern) holds its share of the snapshot's printings; old sets are smaller on
    # average and lose more to the size cap, hence the nudge.
    share = {False: min(1.0, old_share * 0.93), True: 1 - min(1.0, old_share * 0.93)}
    kinds = {kind: max(1, sum(e.prints_code == kind for e in entries)) for kind in share}
    weights = [share[e.prints_code] / kinds[e.prints_code] for e in entries]
    names: list[tuple[str, str, str]] = []  # (name, artist, type line) of every earlier non-basic printing
    used: set[str] = set()
    cards: list[dict[str, Any]] = []
    for entry, weight in zip(entries, weights, strict=True):
        count = max(12, round(printings * weight * rng.uniform(0.7, 1.3)))
        count = min(count, entry.printed_size // 2)
        copies = rng.choice((0, 1, 2, 4, 4)) if entry.printed_size >= 150 else 0
        basics = _basic_numbers(entry.printed_size, copies) if copies else {}
        taken = {n for numbers in basics.values() for n in numbers}
        pool = [n for n in range(1, entry.printed_size + 1) if n not in taken]
        rng.shuffle(pool)
        border = "white" if not entry.prints_code and rng.random() < 0.35 else "black"
        keep = count / entry.printed_size  # the snapshot holds as large a share of the basics as of the rest
        for land, numbers in basics.items():
            for number in numbers:
                if rng.random() >= keep:
                    continue
                cards.append(_card(rng, entry, land, str(number), "common",
                                   f"{rng.choice(_ARTISTS_FIRST)} {rng.choice(_ARTISTS_LAST)}",
                                   f"Basic Land — {land}", border))
        in_set: set[str] = set()
        above = entry.printed_size
        for number in sorted(pool[:count]):
            if names and rng.random() < 0.2:
                name, artist, type_line = rng.choice(names)
            else:
                name = f"{rng.choice(_EPITHETS)} {rng.choice(_TITLES)}"
                if rng.random() < 0.5:
                    name = f"{_word(rng)}, {name}" if rng.random() < 0.3 else f"{name} of {_word(rng)}"
                if entry.prints_code and rng.random() < 0.03:
                    name = f"{name} // {rng.choice(_EPITHETS)} {rng.choice(_TITLES)}"
                if name in used:
                    continue
                used.add(name)
                artist = f"{rng.choice(_ARTISTS_FIRST)} {rng.choice(_ARTISTS_LAST)}"
                type_line = rng.choice(_TYPES)
                names.append((name, artist, type_line))
            if name in in_set:
                continue  # one printing of a non-basic name per set
            in_set.add(name)
            printed = number
            if entry.prints_code and rng.random() < 0.02:
                above += rng.randint(1, 6)  # box toppers and showcase cards, numbered above the printed total
                printed = above
            rarity = rng.choices(_RARITIES, (10, 6, 3, 1 if entry.prints_code else 0))[0]
            card_border = "borderless" if entry.prints_code and rng.random() < 0.04 else border
            cards.append(_card(rng, entry, name, str(printed), rarity, artist, type_line, card_border))
    present = {card["set"] for card in cards}
    return Catalogue(cards, {e.code: e for e in entries if e.code in present})


def stable_digest(*parts: object) -> int:
    """A 64-bit integer fixed by `parts` (seeds what a scan looks like, independent of Python's hash seed)."""
    return int.from_bytes(hashlib.blake2b("|".join(map(str, parts)).encode(), digest_size=8).digest(), "big")
