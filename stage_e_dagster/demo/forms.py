"""Every kind of upload a contributor sends, for the demo (`demo generate --kinds`) and the test corpus.

`extend_catalog` adds to a generated catalogue what the demo's own does not print: sets from before collector
numbers (frame "1993", 1993-1997, names reprinted among them under other borders and years), token sets with their
own codes ("t" + a set's code, the same token names in several), a promo set whose numbers carry an `s` suffix
("12s", the base set's number), and a set with prefixed numbers ("A-12"). `plan_kinds` then draws each scan's kind
in these shares and names its file the way a contributor's source does:

| kind            | share | what is drawn                                          | file                        |
|-----------------|-------|--------------------------------------------------------|-----------------------------|
| card            |  45%  | any printing of the demo's own sets                    | `Name [SET].jpg`            |
| suffixed        |  10%  | a number with a suffix or prefix (12s, 12a, ★12, A-12) | `Name [SET].jpg`            |
| numberless      |  10%  | a printing from before collector numbers (© year)      | `Name.jpg`                  |
| token           |  10%  | a token printing (its own set code)                    | `tokens/N.jpg`, `N [token].jpg` |
| language-marker |   7%  | a card whose collector line says `• DE`, `• FR`...      | `Name [SET].jpg`            |
| card-back       |   6%  | the back of a card                                     | `cardbacks/b.jpg`, `b [cardback]` |
| custom-art      |   6%  | a card with art of its own                             | `Name [custom art].jpg`     |
| foreign         |   6%  | a card printed in another language, so tagged          | `Name [de].jpg`             |

Language markers and foreign scans both print a marker other than EN; only the foreign one is tagged, and the
language comes from the tag, never from OCR. Everything here is seeded: the same seed draws the same scans.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any

from PIL import Image, ImageDraw, ImageFilter

from stage_e_dagster.demo.catalog import _stable_id
from stage_e_dagster.demo.info import layout_of_card
from stage_e_dagster.demo.render import Degradation, front_name, scan_size
from stage_e_dagster.domain import layout
from stage_e_dagster.domain.printed_lines import CODE_LAYOUTS, NUMBERLESS

KIND_SHARES: tuple[tuple[str, float], ...] = (
    ("card", 0.45), ("suffixed", 0.10), ("numberless", 0.10), ("token", 0.10), ("language-marker", 0.07),
    ("card-back", 0.06), ("custom-art", 0.06), ("foreign", 0.06),
)
"""Each kind's share of the scans `plan_kinds` draws (the table above)."""
SCAN_KINDS = tuple(kind for kind, _ in KIND_SHARES)
TOKEN_LAYOUTS = ("token", "double_faced_token", "emblem")
TOKEN_NAMES = ("Soldier", "Goblin", "Zombie", "Spirit", "Treasure", "Clue", "Beast", "Elemental", "Saproling",
               "Thopter", "Angel", "Dragon")
MARKER_LANGUAGES = ("de", "fr", "it", "es", "ja", "pt")


def is_token(card: dict[str, Any]) -> bool:
    """Whether a catalogue card is a token printing (by layout, or a token set's type)."""
    return card.get("layout") in TOKEN_LAYOUTS or card.get("set_type") == "token"


def is_numberless(card: dict[str, Any]) -> bool:
    """Whether a printing is drawn without a collector number (the sets before Exodus, June 1998)."""
    return layout_of_card(card) == NUMBERLESS


def is_suffixed(card: dict[str, Any]) -> bool:
    """Whether a printing's collector number carries a letter or star beside its digits."""
    number = str(card["collector_number"])
    return not number.isdigit() and not is_numberless(card)


def _printing(rng: random.Random, base: dict[str, Any], **fields: Any) -> dict[str, Any]:
    card = {key: value for key, value in base.items() if key != "card_faces"}
    if base.get("card_faces"):
        card["card_faces"] = base["card_faces"]
    card.update(id=_stable_id(rng), **fields)
    return card


def _old_sets(rng: random.Random, cards: list[dict[str, Any]], taken: set[str]) -> list[dict[str, Any]]:
    """Four sets from 1993-1997 (frame "1993", no collector number printed), half their names shared."""
    names = sorted({c["name"] for c in cards if " // " not in c["name"] and not is_token(c)})
    rng.shuffle(names)
    shared, out = names[:24], []
    specs = [("1993-12-01", "white"), ("1995-04-01", "white"), ("1995-06-01", "black"), ("1997-03-24", "white")]
    base = {c["name"]: c for c in cards}
    for index, (day, border) in enumerate(specs):
        code = _free_code(rng, taken, f"o{index}")
        own = names[24 + 20 * index: 24 + 20 * (index + 1)]
        pool = rng.sample(shared, 14) + own
        for number, name in enumerate(pool, 1):
            out.append(_printing(rng, base[name], set=code, set_name=f"Old Set {index + 1}", released_at=day,
                                 collector_number=str(number), border_color=border, frame="1993",
                                 rarity=rng.choice(("common", "uncommon", "rare"))))
    return out


def _free_code(rng: random.Random, taken: set[str], stem: str) -> str:
    code = stem
    while code in taken:
        code = stem + rng.choice("abcdefghjkmnpqrstuvwxyz")
    taken.add(code)
    return code


def _token_sets(rng: random.Random, cards: list[dict[str, Any]], taken: set[str]) -> list[dict[str, Any]]:
    """A token set for each of up to six modern sets: code "t" + the set's, 6-10 of the shared token names."""
    modern = sorted({(c["set"], c["released_at"]) for c in cards if c["frame"] == "2015" and not is_token(c)})
    out = []
    for code, day in modern[:: max(1, len(modern) // 6)][:6]:
        token_code = _free_code(rng, taken, f"t{code[:4]}")  # a printed set code has at most five characters
        names = rng.sample(TOKEN_NAMES, rng.randint(6, 10))
        for number, name in enumerate(names, 1):
            out.append({
                "object": "card", "id": _stable_id(rng), "name": name, "lang": "en", "released_at": day,
                "layout": "token", "mana_cost": "", "type_line": f"Token Creature — {name}", "set": token_code,
                "set_name": f"{code.upper()} Tokens", "set_type": "token", "collector_number": str(number),
                "rarity": "common", "artist": "Anna Chen", "border_color": "black", "frame": "2015",
            })
    return out


def _promo_and_prefixed(rng: random.Random, cards: list[dict[str, Any]], taken: set[str]) -> list[dict[str, Any]]:
    """A promo set of 30 printings numbered as their base set's with an `s` suffix, and a set of 30 printings
    numbered "A-<n>", both of names the catalogue already has."""
    modern = [c for c in cards if c["frame"] == "2015" and not is_token(c) and str(c["collector_number"]).isdigit()]
    rng.shuffle(modern)
    out = []
    promo, prefixed = _free_code(rng, taken, "pr" + modern[0]["set"][:2]), _free_code(rng, taken, "ya1")
    names = set()
    for card in modern:
        if card["name"] in names:
            continue
        names.add(card["name"])
        if len(names) <= 30:
            out.append(_printing(rng, card, set=promo, set_name="Prerelease Promos",
                                 collector_number=f"{card['collector_number']}s"))
        elif len(names) <= 60:
            out.append(_printing(rng, card, set=prefixed, set_name="Alchemy Reprints",
                                 collector_number=f"A-{len(names) - 30}"))
        else:
            break
    return out


def extend_catalog(cards: list[dict[str, Any]], seed: int = 0) -> list[dict[str, Any]]:
    """`cards` plus the kinds' printings (old numberless sets, token sets, a suffixed promo set, a prefixed set)."""
    if not cards:
        return []
    rng = random.Random(f"forms:{seed}")
    taken = {str(c["set"]) for c in cards}
    return [*cards, *_old_sets(rng, cards, taken), *_token_sets(rng, cards, taken),
            *_promo_and_prefixed(rng, cards, taken)]


@dataclass(frozen=True)
class KindScan:
    """One planned scan of a kind: the printing it shows (None for a card back), the card as drawn (its collector
    line's language, its art), its path relative to the source, and what the collector line says."""

    kind: str
    card: dict[str, Any] | None
    drawn: dict[str, Any] | None
    path: str
    number: str | None
    set_code: str | None


def draw_kind(rng: random.Random) -> str:
    """A kind drawn in `KIND_SHARES`."""
    return rng.choices(SCAN_KINDS, [share for _, share in KIND_SHARES])[0]


def _pools(catalog: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    plain = [c for c in catalog if not is_token(c) and not is_numberless(c)]
    return {
        "card": [c for c in plain if not is_suffixed(c)], "language-marker": [c for c in plain if c["frame"] == "2015"],
        "suffixed": [c for c in plain if is_suffixed(c)],
        "numberless": [c for c in catalog if is_numberless(c) and not is_token(c)],
        "token": [c for c in catalog if is_token(c)],
        "custom-art": plain, "foreign": [c for c in plain if c["frame"] == "2015"],
    }


def plan_kinds(catalog: list[dict[str, Any]], count: int, seed: int = 0) -> list[KindScan]:
    """`count` scans drawn in `KIND_SHARES` from a catalogue `extend_catalog` made (kinds with an empty pool are
    drawn again), each with a source-relative path following the default conventions (paths may repeat: a
    writer makes them unique with a trailing " (n)", which the file-name rules drop)."""
    rng = random.Random(f"kinds:{seed}")
    pools = _pools(catalog)
    out: list[KindScan] = []
    while len(out) < count:
        kind = draw_kind(rng)
        if kind == "card-back":
            tagged = rng.random() < 0.5
            path = "back [cardback].jpg" if tagged else "cardbacks/back.jpg"
            out.append(KindScan(kind, None, None, path, None, None))
            continue
        if not pools[kind]:
            continue
        card = rng.choice(pools[kind])
        name = front_name(card)
        drawn = card
        hint = f" [{str(card['set']).upper()}]" if rng.random() < 0.6 else ""
        path = f"{name}{hint}.jpg"
        if kind == "numberless":
            path = f"{name}.jpg"
        elif kind == "token":
            path = f"tokens/{name}.jpg" if rng.random() < 0.5 else f"{name} [token].jpg"
        elif kind in ("language-marker", "foreign"):
            lang = rng.choice(MARKER_LANGUAGES)
            drawn = {**card, "lang": lang}
            path = f"{name} [{lang}].jpg" if kind == "foreign" else path
        elif kind == "custom-art":
            drawn = {**card, "art_seed": f"custom:{card['id']}"}
            path = f"{name} [custom art].jpg"
        code = str(card["set"]) if layout_of_card(card) in CODE_LAYOUTS else None
        number = None if kind == "numberless" else str(card["collector_number"])
        out.append(KindScan(kind, card, drawn, path, number, code))
    return out


def render_card_back(long_side: int = 1040, bleed: bool = False, seed: int = 0,
                     degradation: Degradation | None = None) -> Image.Image:
    """The back of a card: a brown border, a blue-brown oval and a swirl of colours, with no text to read."""
    width, height = scan_size(long_side, bleed)
    trim = layout.trim_rect(width, height, bleed)
    img = Image.new("RGB", (width, height), (58, 38, 24))
    draw = ImageDraw.Draw(img)
    inner = trim.crop_box((0.06, 0.045, 0.94, 0.955))
    draw.rounded_rectangle(inner, radius=round(trim.height * 0.02), fill=(120, 82, 48))
    oval = trim.crop_box((0.16, 0.2, 0.84, 0.8))
    draw.ellipse(oval, fill=(40, 52, 110), outline=(200, 160, 90), width=max(2, round(trim.height / 200)))
    rng = random.Random(f"back:{seed}")
    cx, cy = (oval[0] + oval[2]) / 2, (oval[1] + oval[3]) / 2
    for colour in ((240, 230, 190), (40, 110, 200), (30, 30, 30), (200, 60, 40), (40, 150, 70)):
        angle = rng.uniform(0, 6.28)
        r = trim.height * 0.06
        x = cx + (oval[2] - oval[0]) * 0.25 * rng.uniform(-1, 1) * abs(math.cos(angle))
        y = cy + (oval[3] - oval[1]) * 0.25 * rng.uniform(-1, 1)
        draw.ellipse((x - r, y - r, x + r, y + r), fill=colour)
    img = img.filter(ImageFilter.GaussianBlur(1))
    return degradation.apply(img, seed=seed) if degradation is not None else img
