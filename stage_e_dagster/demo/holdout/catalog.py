"""A Scryfall-shaped catalogue with the quirks of the real one, for the held-out scans.

Written apart from `demo.catalog` (it shares only the card objects' shape). Its sets fall in six eras whose
printings take the shares of English paper printings a 2019 snapshot has (later sets added to the modern two):

| era | frame | released | layout (`domain.printed_lines`) | share |
| --- | --- | --- | --- | --- |
| Alpha to Alliances | 1993 | 1993-08 to 1996-10 | numberless | 12% |
| Mirage to Stronghold | 1997 | 1996-10 to 1998-05 | numberless | 5% |
| Exodus to Scourge | 1997 | 1998-06 to 2003-05 | centred | 14% |
| 8th Edition to Journey into Nyx | 2003 | 2003-07 to 2014-05 | legal-number | 35% |
| Magic 2015 to Phyrexia | 2015 | 2014-07 to 2023-04-20 | modern | 27% |
| March of the Machine on | 2015 | 2023-04-21 on | rarity-first | 7% (a fifth of frame 2015) |

What else it has because the real catalogue has it:

- sets of uneven size (supplements of 80-160 cards, expansions of 180-400) whose printed totals are not the number
  of printings the snapshot holds; a set's `layout` follows from its `frame` and `released_at` alone;
- the five basic lands printed one to four times in most sets, numbered together at the end of the set, so one
  name has many printings, several in one set, with numbers one apart;
- premium printings of the 1997 and 2003 frames numbered with a star ("123★"), in some sets beside the unstarred
  printing of the same number; letter suffixes ("57a", often with "57b"); one small modern set whose numbers carry
  a prefix ("GR6");
- modern sets with box toppers numbered above the printed total, and (more from late 2019 on) borderless, showcase
  and extended-art printings of the set's own cards numbered above the total; modern sets from 2020 on mostly
  zero-pad ("078/221");
- companion sets whose code is the parent's with a trailing "C" (NEO / NEC), core sets coded "M" plus two digits,
  reprints of a name across sets under other numbers, double-faced names, white borders on a third of the
  sets before 2005.
"""

from __future__ import annotations

import hashlib
import random
import uuid
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from stage_e_dagster.domain.printed_lines import CENTRED, CODE_LAYOUTS, LEGAL_NUMBER, layout_of

BASICS = ("Plains", "Island", "Swamp", "Mountain", "Forest")
STAR = "★"
MYTHIC_FROM = date(2008, 10, 3)
"""Shards of Alara, the first set with mythic rares."""
SHOWPIECES_FROM = date(2019, 10, 4)
"""Throne of Eldraine: from here on most modern sets add borderless, showcase and extended-art printings."""


@dataclass(frozen=True)
class Era:
    """A stretch of sets with one frame and one collector-line layout, and its share of the printings."""

    name: str
    frame: str
    first: date
    last: date
    share: float


ERAS = (
    Era("alpha-to-alliances", "1993", date(1993, 8, 5), date(1996, 10, 7), 0.12),
    Era("mirage-to-stronghold", "1997", date(1996, 10, 8), date(1998, 5, 31), 0.05),
    Era("exodus-to-scourge", "1997", date(1998, 6, 15), date(2003, 5, 31), 0.14),
    Era("eighth-to-journey", "2003", date(2003, 7, 28), date(2014, 5, 2), 0.35),
    Era("m15-to-phyrexia", "2015", date(2014, 7, 18), date(2023, 4, 20), 0.27),
    Era("march-of-the-machine-on", "2015", date(2023, 4, 21), date(2025, 9, 1), 0.07),
)

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
_SHOWPIECES = (("borderless", 0.45), ("showcase", 0.3), ("extendedart", 0.25))


@dataclass(frozen=True)
class SetEntry:
    """One set of the catalogue, as Scryfall's set list gives it, with how its cards print their numbers:
    `core` sets of the old frames print a span of years ("1993-2003"), `padded` modern sets print "078/221",
    a `prefix` goes before every number ("GR6")."""

    code: str
    name: str
    released_at: date
    printed_size: int
    frame: str
    core: bool = False
    padded: bool = False
    prefix: str = ""

    @property
    def layout(self) -> str:
        """The collector-line layout its printings print (`domain.printed_lines.layout_of`)."""
        found = layout_of(self.frame, self.released_at)
        assert found is not None, (self.frame, self.released_at)
        return found

    @property
    def prints_code(self) -> bool:
        """Whether its collector line prints the set code (the modern and rarity-first layouts)."""
        return self.layout in CODE_LAYOUTS


@dataclass(frozen=True)
class Catalogue:
    """The printings (Scryfall card objects) and the sets they belong to, by code."""

    cards: list[dict[str, Any]]
    sets: dict[str, SetEntry]


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 3))).capitalize()


def _codes(rng: random.Random, frames: list[str]) -> list[tuple[str, bool]]:
    """(code, core) per set: mostly three letters, core sets ("M" + digits in the modern frame, digit + "ED"
    before), some with a digit, four letters, companions ending in C."""
    taken: set[str] = set()
    codes: list[tuple[str, bool]] = []
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    core = 10
    while len(codes) < len(frames):
        modern, roll, is_core = frames[len(codes)] == "2015", rng.random(), False
        last = codes[-1][0] if codes else ""
        if roll < 0.1:
            is_core = True
            if modern:
                core += rng.randint(1, 3)
                code = f"M{core % 100:02d}"
            else:
                code = f"{rng.randint(4, 9)}E{rng.choice(letters)}"
        elif roll < 0.2:
            code = rng.choice(letters) + str(rng.randint(1, 9)) + rng.choice(letters)
        elif roll < 0.27 and modern and len(last) == 3 and last[-1] != "C" and last.isalpha():
            code = last[:2] + "C"  # the companion set of the one before
        elif roll < 0.32:
            code = "".join(rng.choice(letters) for _ in range(4))
        else:
            code = "".join(rng.choice(letters) for _ in range(3))
        if code not in taken:
            taken.add(code)
            codes.append((code, is_core))
    return codes


def _basic_numbers(total: int, copies: int) -> dict[str, list[int]]:
    """The basics' numbers at the end of a set: each land's copies together, Plains first, Forest last."""
    first = total - copies * len(BASICS) + 1
    return {land: [first + k * copies + i for i in range(copies)] for k, land in enumerate(BASICS)}


def _card(rng: random.Random, entry: SetEntry, name: str, number: str, rarity: str, artist: str, type_line: str,
          border: str, effects: tuple[str, ...] = (), foil_only: bool = False) -> dict[str, Any]:
    return {
        "object": "card", "id": _uuid(rng), "name": name, "lang": "en",
        "released_at": entry.released_at.isoformat(), "layout": "transform" if " // " in name else "normal",
        "mana_cost": "" if type_line.startswith("Basic") else rng.choice(("{1}{G}", "{2}{U}", "{B}{B}", "{3}{R}",
                                                                           "{W}", "{4}", "{2}{W}{U}")),
        "type_line": type_line, "set": entry.code, "set_name": entry.name, "collector_number": number,
        "rarity": rarity, "artist": artist, "border_color": border, "frame": entry.frame,
        "frame_effects": list(effects), "finishes": ["foil"] if foil_only else ["nonfoil", "foil"],
    }


def _entries(rng: random.Random, printings: int) -> list[tuple[SetEntry, float]]:
    """The sets, oldest first, each with the number of printings the snapshot holds of it."""
    planned: list[tuple[Era, date, float]] = []
    for era in ERAS:
        budget = printings * era.share
        n_sets = max(2, round(budget / 45))
        span = (era.last - era.first).days
        days = sorted(era.first + timedelta(days=rng.randrange(span + 1)) for _ in range(n_sets))
        weights = [rng.uniform(0.6, 1.4) for _ in days]
        planned += [(era, day, budget * w / sum(weights)) for day, w in zip(days, weights, strict=True)]
    codes = _codes(rng, [era.frame for era, _, _ in planned])
    out: list[tuple[SetEntry, float]] = []
    prefixed = False
    for (era, day, count), (code, core) in zip(planned, codes, strict=True):
        size = rng.choice((rng.randint(80, 165), rng.randint(180, 300), rng.randint(250, 400)))
        size = max(size, round(count / 0.7))  # the snapshot holds at most about 70% of a set's numbers
        prefix = ""
        if era.name == "m15-to-phyrexia" and not prefixed and count < 45:
            prefix, prefixed = rng.choice(("GR", "PZ", "SL", "KT")), True
            size = max(20, round(count / 0.7))
        padded = era.frame == "2015" and rng.random() < (0.8 if day >= date(2020, 1, 1) else 0.08)
        out.append((SetEntry(code.lower(), f"{_word(rng)} {rng.choice(_TITLES)}s", day, size, era.frame, core,
                             padded, prefix), count))
    return out


def _number_variants(rng: random.Random, entry: SetEntry, number: int, stars: bool, suffixes: bool
                     ) -> list[tuple[str, bool]]:
    """The collector numbers one card of an old numbered set has, each with whether it is foil only: "57",
    "57★" (premium) beside or instead of "57", or "57a" with or without "57b"."""
    if stars and rng.random() < 0.15:
        return [(f"{number}{STAR}", True)] + ([(str(number), False)] if rng.random() < 0.7 else [])
    if suffixes and rng.random() < 0.06:
        return [(f"{number}a", False)] + ([(f"{number}b", False)] if rng.random() < 0.6 else [])
    return [(f"{entry.prefix}{number}", False)]


def holdout_catalog(printings: int = 3000, seed: int = 0) -> Catalogue:
    """About `printings` printings over about one set per 45, in the eras' shares (`ERAS`)."""
    rng = random.Random(f"holdout-catalogue:{seed}")
    names: list[tuple[str, str, str]] = []  # (name, artist, type line) of every earlier non-basic printing
    used: set[str] = set()
    cards: list[dict[str, Any]] = []
    entries = _entries(rng, printings)
    for entry, wanted in entries:
        count = max(12, round(wanted * rng.uniform(0.9, 1.1)))
        modern, old_numbered = entry.frame == "2015", entry.layout in (CENTRED, LEGAL_NUMBER)
        copies = rng.choice((0, 1, 2, 4, 4)) if entry.printed_size >= 150 and not entry.prefix else 0
        basics = _basic_numbers(entry.printed_size, copies) if copies else {}
        taken = {n for numbers in basics.values() for n in numbers}
        pool = [n for n in range(1, entry.printed_size + 1) if n not in taken]
        rng.shuffle(pool)
        border = "white" if entry.released_at < date(2005, 8, 1) and rng.random() < 0.35 else "black"
        made = len(cards)
        for land, numbers in basics.items():
            for number in numbers:
                if rng.random() < 0.85:  # the snapshot holds most basics (they count in the set's share)
                    artist = f"{rng.choice(_ARTISTS_FIRST)} {rng.choice(_ARTISTS_LAST)}"
                    cards.append(_card(rng, entry, land, f"{entry.prefix}{number}", "common", artist,
                                       f"Basic Land — {land}", border))
        stars = old_numbered and rng.random() < 0.3
        suffixes = old_numbered and rng.random() < 0.25
        showpieces = 0.12 if entry.released_at >= SHOWPIECES_FROM else 0.02 if modern else 0.0
        in_set: list[tuple[str, str, str, str]] = []
        above = entry.printed_size
        main = count - round(count * showpieces)
        for number in pool:
            if len(cards) - made >= main:
                break
            if names and rng.random() < 0.2:
                name, artist, type_line = rng.choice(names)
            else:
                name = f"{rng.choice(_EPITHETS)} {rng.choice(_TITLES)}"
                if rng.random() < 0.5:
                    name = f"{_word(rng)}, {name}" if rng.random() < 0.3 else f"{name} of {_word(rng)}"
                if modern and rng.random() < 0.03:
                    name = f"{name} // {rng.choice(_EPITHETS)} {rng.choice(_TITLES)}"
                if name in used:
                    continue
                used.add(name)
                artist = f"{rng.choice(_ARTISTS_FIRST)} {rng.choice(_ARTISTS_LAST)}"
                type_line = rng.choice(_TYPES)
                names.append((name, artist, type_line))
            if any(name == seen[0] for seen in in_set):
                continue  # one printing of a non-basic name per set, but for its variants
            mythic = 1 if entry.released_at >= MYTHIC_FROM else 0
            rarity = rng.choices(_RARITIES, (10, 6, 3, mythic))[0]
            in_set.append((name, artist, type_line, rarity))
            if modern and rng.random() < 0.02:
                above += rng.randint(1, 6)  # box toppers, numbered above the printed total
                cards.append(_card(rng, entry, name, f"{entry.prefix}{above}", rarity, artist, type_line, border))
                continue
            for printed, foil_only in _number_variants(rng, entry, number, stars, suffixes):
                cards.append(_card(rng, entry, name, printed, rarity, artist, type_line, border, foil_only=foil_only))
        for name, artist, type_line, rarity in rng.sample(in_set, min(len(in_set), round(count * showpieces))):
            kind = rng.choices([k for k, _ in _SHOWPIECES], [w for _, w in _SHOWPIECES])[0]
            above += 1  # the set's showpieces follow its printed total, in a run
            cards.append(_card(rng, entry, name, f"{entry.prefix}{above}", rarity, artist, type_line,
                               "borderless" if kind == "borderless" else border,
                               () if kind == "borderless" else (kind,)))
    present = {card["set"] for card in cards}
    return Catalogue(cards, {entry.code: entry for entry, _ in entries if entry.code in present})


def stable_digest(*parts: object) -> int:
    """A 64-bit integer fixed by `parts` (seeds what a scan looks like, independent of Python's hash seed)."""
    return int.from_bytes(hashlib.blake2b("|".join(map(str, parts)).encode(), digest_size=8).digest(), "big")
