"""A Scryfall "All Cards"-shaped bulk file of any size, generated as a stream (the full-catalogue benchmark and the
import tests use it).

What varies as it does in the real file:

- set kinds: expansions and core sets, each with its token set (`t` + code), promo set (`p` + code) and, from 2019,
  art-series set (`a` + code); un-sets (silver border) and championship decks (gold border);
- frames by release date (1993, 1997, 2003, 2015) and `future` for a share of 2007's cards and a few later ones;
  borders black, white (older core sets), silver, gold and borderless (modern variants);
- layouts with their `card_faces`: normal, transform, modal_dfc, split, adventure, flip, meld, saga, token,
  double_faced_token, emblem, art_series;
- collector numbers: plain, zero-padded (`007`), suffixed (`12a`/`12b` variants and meld pairs, `12s` prerelease,
  `12p` promo pack, `12★`), prefixed (`A12`, and `jk12sb` on championship decks);
- promos (`promo`, `promo_types`); basic lands in most sets (hundreds of printings of one name), token names
  reprinted set after set, and reprints of earlier names;
- languages: a translated set carries each printing once per language, with the English `name`, set and number and
  its own `printed_name`; `non_english` is the share of records that are not English.

Records carry the fields a real one does (legalities, prices, image, related and purchase URIs, oracle and flavour
text), about 3.5 kB each. Nothing is held per record: `all_cards` yields one object at a time from a plan of sets
made up front (`plan_sets`), and a name is a function of its number, so a reprint needs no list of earlier names.
"""

from __future__ import annotations

import json
import random
import uuid
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from stage_e_dagster.demo.catalog import write_catalog

LANGUAGES = ("es", "fr", "de", "it", "pt", "ja", "ko", "ru", "zhs", "zht")
BASICS = ("Plains", "Island", "Swamp", "Mountain", "Forest")
LAYOUTS = ("normal", "transform", "modal_dfc", "split", "adventure", "flip", "meld", "saga", "token",
           "double_faced_token", "emblem", "art_series")
TWO_FACED = frozenset({"transform", "modal_dfc", "split", "adventure", "flip", "double_faced_token", "art_series"})
_FORMATS = ("standard", "future", "historic", "timeless", "gladiator", "pioneer", "explorer", "modern", "legacy",
            "pauper", "vintage", "penny", "commander", "oathbreaker", "standardbrawl", "brawl", "alchemy",
            "paupercommander", "duel", "oldschool", "premodern", "predh")
_SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"][:48]
_ROLES = ("Sentinel Warden Oracle Reaver Herald Stalker Keeper Seer Tyrant Acolyte Duelist Behemoth Chanter Drifter "
          "Envoy Forager Glider Hunter Invoker Jailer Kindler Lancer Mender Nomad Outrider Pilgrim Quester Raider "
          "Striker Tracker Usurper Vanguard Weaver Zealot Ritual Bargain Decree Tempest Vision Summons Rebuke "
          "Blessing Covenant Insight Reclamation Command Surge Edict").split()
_BACKS = ("Ascendant Unbound Reborn Awakened Eternal Transfigured Risen Exalted Remade Unleashed Ruined "
          "Victorious").split()
_TOKENS = ("Goblin Soldier Zombie Treasure Clue Food Spirit Beast Saproling Thopter Angel Dragon Elf Warrior "
           "Human Knight Wolf Bird Servo Construct Eldrazi Spawn Insect Cat Vampire Elemental Blood Map Powerstone "
           "Faerie Rogue Illusion Germ Citizen Squirrel Shapeshifter").split()
_TYPES = ("Creature — Elf Warrior", "Instant", "Sorcery", "Enchantment", "Artifact — Equipment",
          "Legendary Creature — Human Wizard", "Creature — Dragon", "Land", "Planeswalker — Vess")
_TEXT = ("When this creature enters, draw a card. ", "Flying, vigilance. ", "{T}: Add {G}. ",
         "Destroy target creature an opponent controls. ", "Counter target spell unless its controller pays {3}. ",
         "At the beginning of your upkeep, scry 1. ", "Equipped creature gets +2/+2 and has trample. ",
         "Whenever another creature you control dies, create a 1/1 black Zombie creature token. ")
_CJK = ("的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年"
        "得就那要下以生会自着去之过家学对可她里后小么心多天而能好都然")


@dataclass(frozen=True)
class SetPlan:
    """One set of the generated file: its English printings, the languages each is also printed in, and the forms
    its printings take."""

    code: str
    name: str
    kind: str  # expansion, core, token, promo, memorabilia, funny, championship
    released_at: date
    english: int
    langs: tuple[str, ...]
    numbering: str  # plain, padded, prefixed, suffixed (promo), initials (championship)
    printed_size: int

    @property
    def frame(self) -> str:
        day = self.released_at
        return ("1993" if day < date(1997, 10, 1) else "1997" if day < date(2003, 7, 1)
                else "2003" if day < date(2014, 7, 1) else "2015")

    @property
    def border(self) -> str:
        if self.kind in ("funny", "championship"):
            return "silver" if self.kind == "funny" else "gold"
        return "white" if self.kind == "core" and self.released_at.year < 2007 else "black"

    @property
    def records(self) -> int:
        return self.english * (1 + len(self.langs))


def _code(index: int, rng: random.Random) -> str:
    letters = "abcdefghijklmnopqrstuvwxyz"
    head = letters[index % 26] + letters[(index // 26) % 26] + letters[(index // 676) % 26]
    return head if rng.random() < 0.7 else head[:2] + str((index // 676) % 10)


def plan_sets(records: int, seed: int = 0, non_english: float = 0.5) -> list[SetPlan]:
    """The sets of a `records`-record file, oldest first: English printings and languages add up to at least
    `records`, with about `non_english` of them not English."""
    rng = random.Random(f"all-cards-sets:{seed}")
    groups = max(min(40, records // 60), round(records / 1600), 1)  # a small file still spans every era
    english_per_group = max(8.0, records * (1 - non_english) / groups)
    first, last = date(1993, 8, 5), date(2025, 11, 14)
    plans: list[SetPlan] = []
    for group in range(groups):
        day = first + timedelta(days=(last - first).days * group // groups)
        code = _code(group, rng)
        if group % 40 == 17:  # an un-set or a championship deck in place of an expansion
            kind = "funny" if group % 80 == 17 else "championship"
            size = max(4, int(english_per_group * 0.4))
            plans.append(SetPlan(code, f"{code.upper()} {kind.title()}", kind, day, size, (),
                                 "initials" if kind == "championship" else "plain", size))
            continue
        kind = "core" if group % 6 == 0 else "expansion"
        main = max(4, int(english_per_group * rng.uniform(0.8, 1.1)))
        numbering = "padded" if rng.random() < 0.04 else "prefixed" if rng.random() < 0.03 else "plain"
        langs = LANGUAGES if day.year >= 2001 else LANGUAGES[:6] if day.year >= 1995 else ()
        plans.append(SetPlan(code, f"{code.upper()} {kind.title()}", kind, day, main, langs, numbering,
                             main - _variants(main, day)))
        if day.year >= 2003:  # side sets in proportion to their expansion, as in the real file
            plans.append(SetPlan(f"t{code}", f"{code.upper()} Tokens", "token", day,
                                 max(3, int(main * rng.uniform(0.04, 0.09))),
                                 langs[:4] if day.year >= 2012 else (), "plain", 0))
        if day.year >= 1999:
            plans.append(SetPlan(f"p{code}", f"{code.upper()} Promos", "promo", day,
                                 max(3, int(main * rng.uniform(0.04, 0.14))), (), "suffixed", 0))
        if day.year >= 2019:
            plans.append(SetPlan(f"a{code}", f"{code.upper()} Art Series", "memorabilia", day,
                                 max(3, int(main * rng.uniform(0.1, 0.2))), (), "plain", 0))
    english = sum(plan.english for plan in plans)
    wanted = max(0, records - english)
    possible = sum(plan.english * len(plan.langs) for plan in plans) or 1
    share = min(1.0, wanted / possible)
    out = []
    for plan in plans:  # each translated set keeps the share of its languages that lands on the total, drawn
        keep = round(len(plan.langs) * share + rng.uniform(-0.49, 0.49)) if plan.langs else 0
        langs = sorted(rng.sample(plan.langs, max(0, min(len(plan.langs), keep))), key=LANGUAGES.index)
        out.append(SetPlan(plan.code, plan.name, plan.kind, plan.released_at, plan.english, tuple(langs),
                           plan.numbering, plan.printed_size))
    short = records - sum(plan.records for plan in out)
    if short > 0:  # rounding fell short: one more English-only set
        out.append(SetPlan(f"x{len(out)}", "Extras", "expansion", out[-1].released_at, short, (), "plain", short))
    return out


def _word(index: int) -> str:
    parts = []
    for _ in range(2 + index // (len(_SYLLABLES) ** 2)):
        parts.append(_SYLLABLES[index % len(_SYLLABLES)])
        index //= len(_SYLLABLES)
    return "".join(parts).capitalize()


def name_of(number: int) -> str:
    """The `number`th card name: distinct for every number."""
    return f"{_word(number // len(_ROLES))} {_ROLES[number % len(_ROLES)]}"


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


class _Writer:
    """Builds records; `names` counts the names used so far and `layouts` remembers each name's layout (a byte
    per name), so a reprint keeps its faces."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(f"all-cards:{seed}")
        self.names = 0
        self.layouts = bytearray()

    def new_name(self, day: date) -> int:
        roll = self.rng.random()
        layout = "normal"
        for name, since, share in (("transform", 2011, 0.06), ("modal_dfc", 2020, 0.05), ("adventure", 2019, 0.04),
                                   ("split", 1995, 0.02), ("flip", 2004, 0.01), ("saga", 2018, 0.03)):
            if day.year >= since and roll < share:
                layout = name
                break
            roll -= share if day.year >= since else 0
        self.layouts.append(LAYOUTS.index(layout))
        self.names += 1
        return self.names - 1

    def reprint(self) -> int:
        return self.rng.randrange(self.names)

    def faces(self, name_id: int) -> tuple[str, list[str] | None, str]:
        layout = LAYOUTS[self.layouts[name_id]]
        front = name_of(name_id)
        if layout in TWO_FACED:
            back = f"{_word(name_id)} {_BACKS[name_id % len(_BACKS)]}"
            return f"{front} // {back}", [front, back], layout
        return front, None, layout

    def card(self, plan: SetPlan, name: str, faces: list[str] | None, layout: str, number: str, *,
             frame: str | None = None, border: str | None = None, promo_types: list[str] | None = None,
             type_line: str | None = None) -> dict[str, Any]:
        rng = self.rng
        card_id, oracle = _uuid(rng), str(uuid.uuid5(uuid.NAMESPACE_OID, name))
        image = f"{card_id[0]}/{card_id[1]}/{card_id}.jpg?{1_500_000_000 + rng.randrange(200_000_000)}"
        sizes = ("small", "normal", "large", "png", "art_crop", "border_crop")
        text = "".join(rng.sample(_TEXT, rng.randint(1, 3))).strip()
        type_line = type_line or _TYPES[zlib.crc32(name.encode()) % len(_TYPES)]
        card: dict[str, Any] = {
            "object": "card", "id": card_id, "oracle_id": oracle, "multiverse_ids": [rng.randrange(600_000)],
            "tcgplayer_id": rng.randrange(600_000), "cardmarket_id": rng.randrange(800_000), "name": name,
            "lang": "en", "released_at": plan.released_at.isoformat(),
            "uri": f"https://api.scryfall.com/cards/{card_id}",
            "scryfall_uri": f"https://scryfall.com/card/{plan.code}/{number}/x?utm_source=api", "layout": layout,
            "highres_image": True, "image_status": "highres_scan",
            "mana_cost": "{2}{G}", "cmc": 3.0, "type_line": type_line, "oracle_text": text,
            "colors": ["G"], "color_identity": ["G"], "keywords": [],
            "legalities": {fmt: rng.choice(("legal", "not_legal")) for fmt in _FORMATS},
            "games": ["paper", "mtgo"], "reserved": False, "foil": True, "nonfoil": True,
            "finishes": ["nonfoil", "foil"], "oversized": False, "promo": promo_types is not None,
            "reprint": rng.random() < 0.4, "variation": False, "set_id": str(uuid.uuid5(uuid.NAMESPACE_DNS, plan.code)),
            "set": plan.code, "set_name": plan.name, "set_type": plan.kind,
            "set_uri": f"https://api.scryfall.com/sets/{plan.code}",
            "set_search_uri": f"https://api.scryfall.com/cards/search?order=set&q=e%3A{plan.code}&unique=prints",
            "scryfall_set_uri": f"https://scryfall.com/sets/{plan.code}?utm_source=api",
            "rulings_uri": f"https://api.scryfall.com/cards/{card_id}/rulings",
            "prints_search_uri": f"https://api.scryfall.com/cards/search?order=released&q=oracleid%3A{oracle}"
                                 "&unique=prints",
            "collector_number": number, "digital": False, "rarity": rng.choice(("common", "uncommon", "rare")),
            "card_back_id": "0aeebaf5-8c7d-4636-9e82-8c27447861f7", "artist": f"{_word(rng.randrange(2304))} Vale",
            "artist_ids": [_uuid(rng)], "illustration_id": _uuid(rng), "border_color": border or plan.border,
            "frame": frame or plan.frame, "full_art": False, "textless": False, "booster": True,
            "story_spotlight": False, "edhrec_rank": rng.randrange(30_000),
            "prices": {"usd": f"{rng.random() * 5:.2f}", "usd_foil": f"{rng.random() * 9:.2f}", "usd_etched": None,
                       "eur": f"{rng.random() * 5:.2f}", "eur_foil": None, "tix": f"{rng.random():.2f}"},
            "related_uris": {"gatherer": f"https://gatherer.wizards.com/Pages/Card/Details.aspx?multiverseid="
                                         f"{rng.randrange(600_000)}",
                             "tcgplayer_infinite_articles": "https://partner.tcgplayer.com/c/4931599/1830156/21018"
                                                            f"?subId1=api&u=https%3A%2F%2Finfinite.tcgplayer.com%2F"
                                                            f"search%3FcontentMode%3Darticle%26q%3D{oracle}",
                             "edhrec": f"https://edhrec.com/route/?cc={name.replace(' ', '+')}"},
            "purchase_uris": {"tcgplayer": f"https://partner.tcgplayer.com/c/4931599/1830156/21018?subId1=api&u="
                                           f"https%3A%2F%2Fwww.tcgplayer.com%2Fproduct%2F{rng.randrange(600_000)}",
                              "cardmarket": f"https://www.cardmarket.com/en/Magic/Products/Search?searchString="
                                            f"{name.replace(' ', '+')}&utm_campaign=card_prices&utm_medium=text",
                              "cardhoarder": "https://www.cardhoarder.com/cards/"
                                             f"{rng.randrange(100_000)}?affiliate_id=scryfall&ref=card-profile"},
        }
        if rng.random() < 0.5:
            card["flavor_text"] = "The old roads remember every traveller who never came back."
        if promo_types is not None:
            card["promo_types"] = promo_types
        if faces is None:
            card["image_uris"] = {size: f"https://cards.scryfall.io/{size}/front/{image}" for size in sizes}
        else:
            card["card_faces"] = [
                {"object": "card_face", "name": face, "mana_cost": "{1}{U}" if i == 0 else "", "type_line": type_line,
                 "oracle_text": text, "artist": card["artist"], "illustration_id": _uuid(rng),
                 **({"image_uris": {size: f"https://cards.scryfall.io/{size}/{'front' if i == 0 else 'back'}/{image}"
                                    for size in sizes}} if layout in ("transform", "modal_dfc") else {})}
                for i, face in enumerate(faces)]
            if layout not in ("transform", "modal_dfc"):
                card["image_uris"] = {size: f"https://cards.scryfall.io/{size}/front/{image}" for size in sizes}
        return card

    def translated(self, card: dict[str, Any], lang: str) -> dict[str, Any]:
        other = dict(card, id=_uuid(self.rng), lang=lang, multiverse_ids=[self.rng.randrange(600_000)])
        if lang in ("ja", "ko", "zhs", "zht", "ru"):
            printed = "".join(self.rng.choice(_CJK) for _ in range(4 + len(card["name"]) // 4))
        else:
            printed = f"{card['name'].split(' // ')[0]} ({lang})"
        other["printed_name"], other["printed_type_line"] = printed, card["type_line"]
        other["printed_text"] = card["oracle_text"]
        return other


def _variants(english: int, day: date) -> int:
    """How many of a modern set's printings are variants numbered past its printed size."""
    return int(english * 0.12) if day.year >= 2018 and english > 40 else 0


def _number(plan: SetPlan, n: int) -> str:
    if plan.numbering == "padded":
        return f"{n:03d}"
    if plan.numbering == "prefixed":
        return f"A{n}"
    return str(n)


def _main_set(writer: _Writer, plan: SetPlan) -> Iterator[dict[str, Any]]:
    """An expansion or core set: regular cards (new names and reprints, old-style `a`/`b` variants, meld pairs),
    basic lands at the end of the numbering, then modern variants (borderless, `future` frame) past it."""
    rng, day = writer.rng, plan.released_at
    basics = 0 if plan.kind in ("funny", "championship") or day.year < 1994 and plan.kind != "core" else \
        min(plan.english // 3, 20 if plan.kind == "core" else rng.choice((0, 5, 10, 15, 20)))
    variants = _variants(plan.english, day)
    regular = plan.english - basics - variants
    n, made = 1, 0
    while made < regular:
        name_id = writer.reprint() if writer.names and rng.random() < 0.3 else writer.new_name(day)
        name, faces, layout = writer.faces(name_id)
        frame = "future" if day.year == 2007 and rng.random() < 0.1 or rng.random() < 0.002 else None
        if plan.numbering == "initials":
            number = f"{_word(name_id)[:2].lower()}{n}" + ("sb" if rng.random() < 0.2 else "")
        else:
            number = _number(plan, n)
        if made + 2 <= regular and (day.year < 1998 and rng.random() < 0.04
                                    or day.year >= 2016 and rng.random() < 0.008):
            # two printings under one number: an old set's art variants, or a meld card and its back half
            if day.year < 1998:
                pair = [(name, faces, layout)] * 2
            else:
                pair = [(name_of(which), None, "meld") for which in (name_id, writer.new_name(day))]
            for suffix, (name, faces, layout) in zip("ab", pair, strict=True):
                yield writer.card(plan, name, faces, layout, number + suffix, frame=frame)
            made, n = made + 2, n + 1
            continue
        yield writer.card(plan, name, faces, layout, number, frame=frame)
        made, n = made + 1, n + 1
    for i in range(basics):
        land = BASICS[i % len(BASICS)] if rng.random() > 0.05 or day.year < 2008 else f"Snow-Covered {BASICS[i % 5]}"
        yield writer.card(plan, land, None, "normal", _number(plan, n), type_line=f"Basic Land — {land.split()[-1]}")
        n += 1
    for _ in range(variants):
        name_id = writer.reprint()
        name, faces, layout = writer.faces(name_id)
        frame = "future" if rng.random() < 0.02 else None
        yield writer.card(plan, name, faces, layout, _number(plan, n), border="borderless", frame=frame)
        n += 1


def _side_set(writer: _Writer, plan: SetPlan) -> Iterator[dict[str, Any]]:
    """A token, promo or art-series set."""
    rng = writer.rng
    used: set[str] = set()
    for n in range(1, plan.english + 1):
        if plan.kind == "token":
            if n == plan.english and plan.released_at.year >= 2012:
                walker = _word(rng.randrange(2304))
                yield writer.card(plan, f"{walker} Emblem", None, "emblem", str(n), type_line=f"Emblem — {walker}")
            elif plan.released_at.year >= 2019 and rng.random() < 0.15:
                front, back = rng.sample(_TOKENS, 2)
                yield writer.card(plan, f"{front} // {back}", [front, back], "double_faced_token", str(n),
                                  type_line=f"Token Creature — {front}")
            else:
                token = rng.choice(_TOKENS)
                yield writer.card(plan, token, None, "token", str(n), type_line=f"Token Creature — {token}")
        elif plan.kind == "promo":
            name, faces, layout = writer.faces(writer.reprint())
            while True:
                base = rng.randint(1, 300)
                form = rng.random()
                number = f"{base}s" if form < 0.5 else f"{base}p" if form < 0.85 else f"{base}★"
                if number not in used:
                    break
            used.add(number)
            kinds = ["prerelease", "datestamped"] if number.endswith("s") else ["promopack"]
            yield writer.card(plan, name, faces, layout, number, promo_types=kinds)
        else:
            front = name_of(writer.reprint())
            yield writer.card(plan, f"{front} // {front}", [front, front], "art_series", str(n),
                              type_line="Card // Card")


def all_cards(records: int, seed: int = 0, non_english: float = 0.5) -> Iterator[dict[str, Any]]:
    """`records` Scryfall card objects, deterministic for a seed, one at a time (see the module docstring)."""
    writer = _Writer(seed)
    left = records
    for plan in plan_sets(records, seed, non_english):
        source = _main_set if plan.kind in ("expansion", "core", "funny", "championship") else _side_set
        for card in source(writer, plan):
            for lang_card in (card, *(writer.translated(card, lang) for lang in plan.langs)):
                if left <= 0:
                    return
                yield lang_card
                left -= 1


def write_all_cards(path: Path | str, records: int, seed: int = 0, non_english: float = 0.5) -> int:
    """Write `records` generated card objects to `path` as a bulk-data JSON array, streaming; returns the count."""
    return write_catalog(path, all_cards(records, seed, non_english))


def write_sets_file(path: Path | str, records: int, seed: int = 0, non_english: float = 0.5) -> int:
    """Write the generated file's sets as a Scryfall `/sets` list (with `printed_size` for expansions and core
    sets); returns how many sets."""
    data = [{"object": "set", "code": plan.code, "name": plan.name, "set_type": plan.kind,
             "released_at": plan.released_at.isoformat(),
             **({"printed_size": plan.printed_size} if plan.printed_size else {})}
            for plan in plan_sets(records, seed, non_english)]
    Path(path).write_text(json.dumps({"object": "list", "has_more": False, "data": data}) + "\n", encoding="utf-8")
    return len(data)
