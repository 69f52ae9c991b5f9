"""Synthetic, Scryfall-shaped printing catalogue with the cases that make scan identification hard.

Its sets follow real Magic's eras in the shares of a 2019 snapshot of English paper printings
(`ERA_SHARES`): 17% printed before collector numbers (frame "1993", or "1997" from Mirage), 14% in the centred
frame "1997" from Exodus, 35% in the 2003 frame, 34% in the 2015 frame (a fifth of them from March of the Machine
on, rarity first); `domain.printed_lines` says what each prints. Hard cases always present (given at least ~12
printings and 6 sets): one name reprinted in three or more sets with the same art (art is seeded by name), the
same collector number for the same name in two sets, sets whose collector line prints a number but no set code,
every border colour, set codes one OCR edit apart from another set's code, the five basic lands numbered together
at the end of many sets (one name, many printings, numbers one apart), premium printings of the 1997 and 2003
frames numbered with a star beside their unstarred twin ("123★"), and letter suffixes ("12a", "12b").
"""

from __future__ import annotations

import hashlib
import json
import random
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

_ADJ = (
    "Ancient Ashen Blazing Bound Brazen Crimson Cursed Dawnborn Dread Drowned Ember Eternal Fabled Feral "
    "Gilded Glimmering Grim Hallowed Hollow Iron Ivory Jade Keen Lost Lunar Molten Mossy Nimble Obsidian "
    "Pale Primal Quiet Radiant Restless Rusted Sable Scarred Shattered Silent Silver Sky Solemn Stone "
    "Storm Sunlit Thorned Tidal Twilight Umbral Unbroken Verdant Vicious Wandering Wild Windswept Wise "
    "Withered Young Zealous"
).split()
_NOUN = (
    "Acolyte Angel Archer Augur Bear Behemoth Blade Brute Captain Chimera Colossus Crusader Dragon Drake "
    "Druid Duelist Elemental Envoy Falcon Familiar Giant Golem Griffin Guardian Harbinger Hydra Knight "
    "Leviathan Lich Mage Manticore Marauder Monk Nomad Oracle Outcast Paladin Phoenix Prowler Ranger "
    "Revenant Sage Scout Sentinel Serpent Shaman Specter Sphinx Squire Stalker Tyrant Vampire Warden "
    "Wolf Wraith Wurm Zealot"
).split()
_PLACE = (
    "Aldmoor Ashfall Brinehold Cindervale Duskmere Eldergrove Frosthelm Glasswater Highspire Ironreach "
    "Kalden Lowmarsh Mirefen Northwind Oakhollow Redcliff Saltmarsh Stormcrest Thornwall Vareth "
    "Whitestone Wyrmrest Yorvale Zephyr"
).split()
_SPELL = (
    "Bolt Blessing Bargain Command Covenant Decree Denial Edict Fury Growth Insight Pact Rebuke Reclamation "
    "Ritual Summons Surge Tempest Tutor Vision Ward"
).split()
_FIRST = (
    "Anna Bram Cara Dmitri Elena Farid Greta Hiro Ines Jonas Kaito Lena Marco Nadia Omar Priya Quinn Rosa "
    "Sven Tara Uma Viktor Wen Xavier Yara Zoltan"
).split()
_LAST = (
    "Abbott Bellamy Chen Dorsey Eklund Fontaine Garza Haddad Ishikawa Jovanovic Kowalski Lindqvist "
    "Moreau Nakamura Okafor Petrov Quinlan Rasmussen Santos Tanaka Urquhart Valdez Whitfield Yilmaz Zorn"
).split()
_TYPES = (
    ("Creature", ("Elf Warrior", "Human Knight", "Dragon", "Spirit", "Zombie", "Goblin Shaman", "Beast")),
    ("Instant", ("",)),
    ("Sorcery", ("",)),
    ("Enchantment", ("", "Aura")),
    ("Artifact", ("", "Equipment")),
    ("Legendary Creature", ("Human Wizard", "Angel", "Vampire Noble")),
)
_COLOURS = "WUBRG"
# Characters an OCR engine confuses; used to build set codes one edit apart.
_CONFUSABLE = {
    "0": "o", "o": "0", "1": "l", "l": "1", "i": "l", "5": "s", "s": "5", "8": "b", "b": "8",
    "2": "z", "z": "2", "m": "n", "n": "m", "c": "e", "e": "c", "h": "b", "u": "v", "v": "u",
}
ERA_SHARES: tuple[tuple[date, date, float], ...] = (
    (date(1994, 1, 10), date(1998, 5, 31), 0.17),  # no collector number: frame 1993, then 1997 from Mirage
    (date(1998, 6, 15), date(2003, 7, 27), 0.14),  # frame 1997, numbered and centred (Exodus to Scourge)
    (date(2003, 7, 28), date(2014, 7, 17), 0.35),  # frame 2003: the number ends the legal line
    (date(2014, 7, 18), date(2023, 4, 20), 0.27),  # frame 2015: "171/274 C" over "BFZ • EN ✎ artist"
    (date(2023, 4, 21), date(2025, 6, 1), 0.07),  # frame 2015 from March of the Machine: "C 0172", rarity first
)
"""Each era's first and last release day and its share of the printings."""
MIRAGE = date(1996, 10, 8)
EIGHTH_EDITION = date(2003, 7, 28)
MAGIC_2015 = date(2014, 7, 18)
BASICS = ("Plains", "Island", "Swamp", "Mountain", "Forest")
ZERO_PADDED_FROM = date(2018, 1, 1)
"""Modern sets from this day print three-digit numbers zero-padded ("078/221 M")."""


def frame_of(day: date) -> str:
    """Scryfall's frame of a printing released on `day`."""
    if day >= MAGIC_2015:
        return "2015"
    if day >= EIGHTH_EDITION:
        return "2003"
    return "1997" if day >= MIRAGE else "1993"


@dataclass
class _Set:
    code: str
    name: str
    released_at: date
    border: str = "black"

    @property
    def frame(self) -> str:
        return frame_of(self.released_at)


@dataclass
class _Name:
    name: str
    artist: str
    type_line: str
    mana_cost: str
    faces: tuple[str, str] | None = None


def set_printed_total(set_code: str) -> int:
    """The printed set size shown after the slash of a collector line ("123/280"), fixed per set code."""
    digest = hashlib.sha256(f"total:{set_code}".encode()).digest()
    return 200 + int.from_bytes(digest[:4], "big") % 200


def _stable_id(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _set_code(rng: random.Random) -> str:
    letters = "abcdefghijklmnopqrstuvwxyz"
    digits = "0123456789"
    form = rng.random()
    if form < 0.45:
        return "".join(rng.choice(letters) for _ in range(3))
    if form < 0.6:
        return rng.choice(letters) + rng.choice(digits[1:]) + rng.choice(digits)
    if form < 0.75:
        return rng.choice(letters) + rng.choice(letters) + rng.choice(digits[1:])
    if form < 0.87:
        return rng.choice(digits[1:]) + rng.choice(letters) + rng.choice(letters)
    return "".join(rng.choice(letters) for _ in range(rng.choice((4, 4, 5))))


def _one_edit(code: str, rng: random.Random, taken: set[str]) -> str | None:
    """A code one OCR substitution away from `code` (a confusable character if possible), not yet taken."""
    positions = list(range(len(code)))
    rng.shuffle(positions)
    for pos in positions:
        ch = code[pos]
        options = [_CONFUSABLE[ch]] if ch in _CONFUSABLE else []
        options += [c for c in ("abcdefghijklmnopqrstuvwxyz" if ch.isalpha() else "0123456789") if c != ch]
        for sub in options[:4]:
            candidate = code[:pos] + sub + code[pos + 1 :]
            if candidate not in taken:
                return candidate
    return None


def _set_name(rng: random.Random, code: str) -> str:
    place = rng.choice(_PLACE)
    pattern = rng.randrange(5)
    if pattern == 0:
        return f"Shadows over {place}"
    if pattern == 1:
        return f"Return to {place}"
    if pattern == 2:
        return f"{place} {rng.choice(('Remastered', 'Horizons', 'Legends', 'Chronicles'))}"
    if pattern == 3:
        return f"The {rng.choice(_ADJ)} {rng.choice(('Age', 'Conclave', 'Frontier', 'Rebellion'))}"
    return f"{rng.choice(_ADJ)} {place}"


def _era_counts(n_sets: int) -> list[int]:
    """How many of `n_sets` sets each era of `ERA_SHARES` gets: its share, by largest remainder, at least one
    each when there are enough sets."""
    shares = [share for _, _, share in ERA_SHARES]
    counts = [int(n_sets * share) for share in shares]
    order = sorted(range(len(shares)), key=lambda i: -(n_sets * shares[i] - counts[i]))
    for i in order[: n_sets - sum(counts)]:
        counts[i] += 1
    if n_sets >= len(shares):
        while 0 in counts:
            counts[counts.index(0)] += 1
            counts[counts.index(max(counts))] -= 1
    return counts


def _make_sets(rng: random.Random, n_sets: int) -> list[_Set]:
    """Sets sorted by release date, each era holding its share (`ERA_SHARES`); forced border colours; a few
    one-edit codes."""
    n_pairs = max(2, n_sets // 25) if n_sets >= 6 else 0
    codes: list[str] = []
    taken: set[str] = set()
    while len(codes) < n_sets - n_pairs:
        code = _set_code(rng)
        if code not in taken:
            codes.append(code)
            taken.add(code)
    for base in rng.sample(codes, n_pairs):
        twin = _one_edit(base, rng, taken)
        if twin is not None:
            codes.append(twin)
            taken.add(twin)
    while len(codes) < n_sets:  # only if a twin could not be made
        code = _set_code(rng)
        if code not in taken:
            codes.append(code)
            taken.add(code)
    rng.shuffle(codes)
    dates: list[date] = []
    for (first, last, _), count in zip(ERA_SHARES, _era_counts(n_sets), strict=True):
        span = (last - first).days
        dates += sorted(first + timedelta(days=rng.randrange(span)) for _ in range(count))
    sets = [_Set(code, _set_name(rng, code), day) for code, day in zip(codes, dates, strict=True)]
    pre = [s for s in sets if s.frame != "2015"] or sets[:1]
    post = [s for s in sets if s.frame == "2015"]
    for s in pre:
        if rng.random() < 0.3:
            s.border = "white"
    pre[0].border = "white"
    if len(pre) >= 2:
        pre[-1].border = "gold"
    if post:
        post[len(post) // 2].border = "silver"
    return sets


def _new_name(rng: random.Random, used: set[str], modern: bool) -> _Name:
    while True:
        pattern = rng.random()
        if pattern < 0.45:
            name = f"{rng.choice(_ADJ)} {rng.choice(_NOUN)}"
        elif pattern < 0.6:
            name = f"{rng.choice(_NOUN)} of {rng.choice(_PLACE)}"
        elif pattern < 0.72:
            name = f"{rng.choice(_PLACE)}'s {rng.choice(_SPELL)}"
        elif pattern < 0.8:
            name = f"{rng.choice(_FIRST)}, {rng.choice(_ADJ)} {rng.choice(_NOUN)}"
        else:
            name = f"{rng.choice(_ADJ)} {rng.choice(_NOUN)} of {rng.choice(_PLACE)}"
        if name not in used:
            break
    used.add(name)
    faces: tuple[str, str] | None = None
    if modern and rng.random() < 0.03:
        back = f"{rng.choice(_ADJ)} {rng.choice(_NOUN)}"
        faces = (name, back)
        name = f"{name} // {back}"
        used.add(name)
    supertype, subtypes = rng.choice(_TYPES)
    sub = rng.choice(subtypes)
    type_line = f"{supertype} — {sub}" if sub else supertype
    generic = rng.choice(("", "1", "2", "3", "4", "X"))
    # Mostly one colour, some two, artifacts usually colourless: the frame colour follows the cost.
    roll = rng.random()
    n_colours = 0 if supertype == "Artifact" and roll < 0.8 else 1 if roll < 0.75 or supertype == "Artifact" else 2
    colours = rng.sample(_COLOURS, n_colours)
    coloured = "".join(f"{{{c}}}" * rng.randint(1, 2) for c in colours)
    mana = (f"{{{generic or '2'}}}" if generic or not coloured else "") + coloured
    artist = f"{rng.choice(_FIRST)} {rng.choice(_LAST)}"
    return _Name(name, artist, type_line, mana, faces)


def _card(rng: random.Random, s: _Set, who: _Name, number: str, border: str, rarity: str) -> dict[str, Any]:
    card: dict[str, Any] = {
        "object": "card",
        "id": _stable_id(rng),
        "name": who.name,
        "lang": "en",
        "released_at": s.released_at.isoformat(),
        "layout": "transform" if who.faces else "normal",
        "mana_cost": "" if who.faces else who.mana_cost,
        "type_line": who.type_line,
        "set": s.code,
        "set_name": s.name,
        "collector_number": number,
        "rarity": rarity,
        "artist": who.artist,
        "border_color": border,
        "frame": s.frame,
    }
    if who.faces:
        card["card_faces"] = [
            {"object": "card_face", "name": who.faces[0], "mana_cost": who.mana_cost, "type_line": who.type_line},
            {"object": "card_face", "name": who.faces[1], "mana_cost": "", "type_line": who.type_line},
        ]
    return card


def _split_counts(rng: random.Random, total: int, parts: int) -> list[int]:
    weights = [rng.uniform(0.5, 1.5) for _ in range(parts)]
    scale = (total - parts) / sum(weights)
    counts = [1 + int(w * scale) for w in weights]
    for i in range(total - sum(counts)):
        counts[i % parts] += 1
    return counts


def _assign_numbers(plan: list[tuple[_Name, str | None]], numbers: list[int]) -> list[str]:
    """Collector numbers for a set's planned printings: a wanted (reprint) number if free, else the next one."""
    pool = [str(n) for n in numbers]
    available = set(pool)
    assigned: list[str | None] = [None] * len(plan)
    for slot, (_, want) in enumerate(plan):
        if want is not None and want in available:
            assigned[slot] = want
            available.discard(want)
    rest = iter(n for n in pool if n in available)
    return [number if number is not None else next(rest) for number in assigned]


def generate_catalog(printings: int, seed: int = 0) -> list[dict[str, Any]]:
    """`printings` Scryfall-shaped card objects over about printings/150 sets (at least 6), deterministic."""
    if printings <= 0:
        return []
    rng = random.Random(seed)
    n_sets = min(printings, max(6, round(printings / 150)))
    sets = _make_sets(rng, n_sets)
    counts = _split_counts(rng, printings, n_sets)
    used: set[str] = set()
    # The staple: reprinted first, in the middle and last, keeping its collector number in two of them.
    staple = _new_name(rng, used, modern=False)
    staple_sets = {0, n_sets // 2, n_sets - 1} if n_sets >= 3 else set(range(n_sets))
    staple_number: str | None = None
    printed: list[tuple[_Name, str]] = []  # (name, collector number) of every earlier printing
    cards: list[dict[str, Any]] = []
    basic_names = {land: _Name(land, "", f"Basic Land — {land}", "") for land in BASICS}
    for index, (s, count) in enumerate(zip(sets, counts, strict=True)):
        modern = s.frame == "2015"
        starred = s.frame == "2003" or s.frame == "1997" and s.released_at >= date(1998, 6, 1)
        total = set_printed_total(s.code)
        copies = rng.choice((0, 1, 2, 4)) if count >= 40 else 0
        basics = [(land, total - len(BASICS) * copies + 1 + k * copies + i)
                  for k, land in enumerate(BASICS) for i in range(copies)][: count // 3]
        pool = list(range(1, total + 1 - len(BASICS) * copies))
        rng.shuffle(pool)
        count -= len(basics)
        numbers = pool[:count] if count <= len(pool) else list(range(1, count + 1))
        plan: list[tuple[_Name, str | None]] = []
        if index in staple_sets:
            keep = staple_number if index != n_sets // 2 else None
            if keep is not None and int(keep) not in numbers:
                numbers[-1] = int(keep)
            plan.append((staple, keep))
        in_set = {who.name for who, _ in plan}
        while len(plan) < count:
            if printed and rng.random() < 0.22:
                who, old = rng.choice(printed)
                if who.name not in in_set:
                    plan.append((who, old if rng.random() < 0.35 else None))
                    in_set.add(who.name)
                    continue
            who = _new_name(rng, used, modern)
            plan.append((who, None))
            in_set.add(who.name)
        assigned = _assign_numbers(plan, sorted(numbers))
        if index in staple_sets and staple_number is None:
            staple_number = assigned[0]
        for slot, (who, _) in enumerate(plan):
            number = assigned[slot]
            if slot + 1 < len(plan) and who is not staple and not modern and number.isdigit() and rng.random() < 0.02:
                if starred and rng.random() < 0.6:  # a premium printing beside its twin: "123★"
                    plan[slot + 1], assigned[slot + 1] = (who, None), f"{number}★"
                else:
                    assigned[slot + 1] = f"{number}b"
                    number = f"{number}a"
            border = s.border
            if modern and border == "black" and (rng.random() < 0.05 or (index == n_sets - 1 and slot == 1)):
                border = "borderless"
            rarity = rng.choices(("common", "uncommon", "rare", "mythic"), (10, 6, 4, 1 if modern else 0))[0]
            cards.append(_card(rng, s, plan[slot][0], number, border, rarity))
        for land, number in basics:
            who = basic_names[land]
            if not who.artist:
                who.artist = f"{rng.choice(_FIRST)} {rng.choice(_LAST)}"
            cards.append(_card(rng, s, who, str(number), s.border, "common"))
        printed.extend((who, number) for (who, _), number in zip(plan, assigned, strict=True))
    return cards


def write_sets(path: Path | str, cards: Iterable[dict[str, Any]]) -> int:
    """Write the catalogue's sets to `path` as a Scryfall `/sets` list object, each with the `printed_size` its
    scans print after the slash; returns how many sets."""
    names = {str(card["set"]): str(card.get("set_name") or card["set"]) for card in cards}
    data = [{"object": "set", "code": code, "name": names[code], "printed_size": set_printed_total(code)}
            for code in sorted(names)]
    Path(path).write_text(json.dumps({"object": "list", "has_more": False, "data": data}, indent=1) + "\n",
                          encoding="utf-8")
    return len(data)


def write_catalog(path: Path | str, cards: Iterable[dict[str, Any]]) -> int:
    """Stream `cards` to `path` as a JSON array, one object per line; returns how many were written."""
    count = 0
    with open(path, "w", encoding="utf-8") as out:
        out.write("[")
        for card in cards:
            out.write(",\n" if count else "\n")
            out.write(json.dumps(card, ensure_ascii=False))
            count += 1
        out.write("\n]\n")
    return count
