"""The scan sets `bench/stage_c.py` measures, from both renderers, behind one shape.

First renderer (`demo.hard` profiles over `demo.catalog`): "demo", "unseen", "hard". Second renderer
(`demo.holdout`, over its own catalogue with a real one's quirks): "holdout", its hard set (720-1680 px, 80%
damaged). The "kinds" set draws every kind of upload (`demo.forms`: tokens, card backs, custom-art and
foreign-tagged files, suffixed numbers, cards without collector numbers, language markers) from the first
renderer's catalogue with those printings added, each scan with the source-relative path the conventions read.
Each set comes with the world its stages see: the catalogue as the reader knows it (`ReadCatalog`) and
as Stage D knows it (printings by name, expansions with their reference set symbols).
"""

from __future__ import annotations

import io
import random
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import Any

from stage_e_dagster.demo import forms, hard
from stage_e_dagster.demo.catalog import generate_catalog
from stage_e_dagster.demo.holdout import plan as holdout
from stage_e_dagster.demo.holdout.catalog import holdout_catalog
from stage_e_dagster.demo.info import layout_of_card
from stage_e_dagster.demo.symbols import render_set_symbol
from stage_e_dagster.domain import printed_lines
from stage_e_dagster.domain.catalog import ExpansionRef, PrintingRef
from stage_e_dagster.domain.evidence.hashing import symbol_phash
from stage_e_dagster.domain.evidence.read_catalog import ReadCatalog
from stage_e_dagster.domain.printed_lines import CODE_LAYOUTS, NUMBERLESS

FIRST_SETS = ("demo", "unseen", "hard", "renders")
SECOND_SETS = ("holdout", "holdout-renders")
KIND_SETS = ("kinds",)
RENDERER = {**dict.fromkeys(FIRST_SETS + KIND_SETS, "first"), **dict.fromkeys(SECOND_SETS, "second")}
PRINTINGS, CATALOG_SEED = 2000, 5
HOLDOUT_PRINTINGS, HOLDOUT_SEED = 3000, 27
HEIGHT_BINS = (720, 880, 1040, 1200, 1360, 1520)
RENDER_HEIGHT = 936
RENDERS = hard.Profile("renders", (RENDER_HEIGHT,), (0.9, 1.1), 0.0, hard.heavy_damage)
"""Official card renders as a catalogue site serves them: 672x936, no bleed in most, undamaged (the "renders"
sets of both renderers stand for the real renders a held-out check reads)."""


@dataclass
class World:
    """A generated catalogue as each stage sees it."""

    cards: list[dict]
    read_catalog: ReadCatalog
    known: set[str]
    printings: dict[str, PrintingRef]  # by scryfall id
    by_name: dict[str, list[PrintingRef]]
    expansions: dict[str, ExpansionRef]


@dataclass(frozen=True)
class Scan:
    """One scan of a set, whichever renderer planned it: the card, what a reader should find, its size and
    damage buckets, and how to render it (`plan.jpeg()`)."""

    plan: Any
    card: dict[str, Any]
    number: str | None  # None: the printing prints no number
    set_code: str | None
    height: int
    blur: float | None  # None: undamaged
    jpeg_quality: int | None
    rotation: float
    kind: str | None = None  # the kind drawn (`demo.forms`), in the "kinds" set only
    path: str | None = None  # its source-relative file path, which the conventions read

    @property
    def degraded(self) -> bool:
        return self.blur is not None

    @property
    def layout(self) -> str:
        """The collector-line layout the printing prints (`domain.printed_lines`), "card-back" for a back."""
        if self.card.get("id") is None:
            return "card-back"
        released = date.fromisoformat(str(self.card["released_at"])[:10])
        return printed_lines.layout_of(str(self.card.get("frame")), released) or printed_lines.MODERN

    @property
    def height_bin(self) -> str:
        low = max(b for b in HEIGHT_BINS if b <= self.height)
        return f"{low}-{HEIGHT_BINS[HEIGHT_BINS.index(low) + 1] - 1}px" if low != HEIGHT_BINS[-1] else f"{low}-1680px"

    def damage_buckets(self) -> list[str]:
        if self.blur is None:
            return ["undamaged"]
        blur = "blur<1.0" if self.blur < 1.0 else "blur1.0-1.2" if self.blur < 1.2 else "blur>=1.2"
        jpeg = "jpeg-none" if self.jpeg_quality is None else f"jpeg{self.jpeg_quality // 10 * 10}s"
        return [blur, jpeg, "rot>=1" if abs(self.rotation) >= 1 else "rot<1"]


def _world(cards: list[dict], read_catalog: ReadCatalog, symbol: Callable[[str], Any]) -> World:
    printings: dict[str, PrintingRef] = {}
    by_name: dict[str, list[PrintingRef]] = defaultdict(list)
    released: dict[str, object] = {}
    for index, card in enumerate(cards, 1):
        ref = PrintingRef(index, card["id"], card["name"], card["set"], card["collector_number"],
                          border_color=card["border_color"], frame=card["frame"], layout=card.get("layout"),
                          set_type=card.get("set_type"))
        printings[card["id"]] = ref
        by_name[card["name"]].append(ref)
        released[card["set"]] = card["released_at"]
    expansions = {code: ExpansionRef(code, date.fromisoformat(str(day)), symbol_phash(symbol(code)),
                                     printed_total=read_catalog.totals.get(code))  # as `catalog import --sets`
                  for code, day in released.items()}
    return World(cards, read_catalog, set(released), printings, dict(by_name), expansions)


class Worlds:
    """Each renderer's world, built on first use."""

    def __init__(self) -> None:
        self._first: World | None = None
        self._second: tuple[World, Any] | None = None
        self._kinds: World | None = None

    def kinds(self) -> World:
        """The first renderer's catalogue with the printings of every kind (`forms.extend_catalog`)."""
        if self._kinds is None:
            cards = forms.extend_catalog(generate_catalog(PRINTINGS, seed=CATALOG_SEED), seed=CATALOG_SEED)
            self._kinds = _world(cards, hard.read_catalog_of(cards), render_set_symbol)
        return self._kinds

    def first(self) -> World:
        if self._first is None:
            cards = generate_catalog(PRINTINGS, seed=CATALOG_SEED)
            self._first = _world(cards, hard.read_catalog_of(cards), render_set_symbol)
        return self._first

    def second(self) -> tuple[World, Any]:
        if self._second is None:
            catalogue = holdout_catalog(HOLDOUT_PRINTINGS, seed=HOLDOUT_SEED)
            symbols = holdout.reference_symbols(catalogue)
            self._second = (_world(catalogue.cards, holdout.read_catalog_of(catalogue), symbols.__getitem__),
                            catalogue)
        return self._second

    def of(self, name: str) -> World:
        if name in KIND_SETS:
            return self.kinds()
        return self.first() if RENDERER[name] == "first" else self.second()[0]


@dataclass(frozen=True)
class BackScan:
    """A planned card back, rendered like the demo's (`forms.render_card_back`)."""

    long_side: int
    bleed: bool
    seed: int
    degradation: Any

    def jpeg(self, quality: int = 92) -> bytes:
        buffer = io.BytesIO()
        forms.render_card_back(self.long_side, self.bleed, self.seed, self.degradation).save(buffer, "JPEG",
                                                                                              quality=quality)
        return buffer.getvalue()


BACK = {"id": None, "name": "back", "released_at": "0000-01-01", "collector_number": None, "set": None}
"""What a card back's scan stands for: no printing; "back" is the name its file gives."""


def plan_kinds(worlds: Worlds, count: int, seed: int) -> list[Scan]:
    """The "kinds" set: every kind in `forms.KIND_SHARES`, drawn as the "unseen" profile draws scans (1040-1680
    px, fonts and layouts the demo does not use, 30% mildly damaged)."""
    profile = hard.PROFILES["unseen"]
    rng = random.Random(f"kinds-bench:{seed}")
    out = []
    for planned in forms.plan_kinds(worlds.kinds().cards, count, seed=seed):
        damage = profile.damage(rng) if rng.random() < profile.degraded_fraction else None
        height, bleed, scan_seed = rng.choice(profile.heights), rng.random() < 0.5, rng.getrandbits(31)
        if planned.drawn is None:
            plan: Any = BackScan(height, bleed, scan_seed, damage)
        else:
            style = hard.random_style(planned.drawn, rng, profile.sizes)
            plan = hard.HardScan(planned.drawn, height, bleed, style, damage, scan_seed)
        number = None if planned.number is None else planned.number.replace("-", "")
        out.append(Scan(plan, planned.card or BACK, number, planned.set_code, height,  # type: ignore[arg-type]
                        None if damage is None else damage.blur_radius, None if damage is None else damage.jpeg_quality,
                        0.0 if damage is None else damage.rotation_deg, planned.kind, planned.path))
    return out


def plan_set(name: str, worlds: Worlds, count: int, seed: int = 1) -> list[Scan]:
    """`count` scans of the set `name`, deterministic for `seed`."""
    if name in KIND_SETS:
        return plan_kinds(worlds, count, seed)
    if RENDERER[name] == "first":
        out = []
        for p in hard.plan_scans(worlds.first().cards, count, RENDERS if name == "renders" else name, seed=seed):
            d = p.degradation
            printed = layout_of_card(p.card)
            code = p.card["set"] if printed in CODE_LAYOUTS else None
            number = None if printed == NUMBERLESS else p.card["collector_number"]
            out.append(Scan(p, p.card, number, code, p.long_side,
                            None if d is None else d.blur_radius, None if d is None else d.jpeg_quality,
                            0.0 if d is None else d.rotation_deg))
        return out
    catalogue = worlds.second()[1]
    out = []
    options = {"heights": (RENDER_HEIGHT, RENDER_HEIGHT), "damaged": 0.0} if name == "holdout-renders" else {}
    for p in holdout.plan_holdout(catalogue, count, seed=seed, **options):
        number, code = p.expected
        d = p.damage
        out.append(Scan(p, p.card, number, code, p.height, None if d is None else d.blur_sigma,
                        None if d is None else d.jpeg_quality, 0.0 if d is None else d.rotation_deg))
    return out
