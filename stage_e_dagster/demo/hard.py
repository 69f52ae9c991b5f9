"""Harder generated scans, for tests and benchmarks only: fonts the demo never draws, type sizes around each era's
real size, offsets, the variants real cards print (The List's mark, a premium print's star separator, "Illus." or
the paintbrush on the 2003 frame; see `demo.info`), more scan sizes and heavier damage.

Profiles:

- "demo": the demo renderer's own scans (1040 or 1680 px, 30% mildly degraded), for comparison.
- "unseen": 1040-1680 px, fonts the demo renderer does not use, type 0.9-1.15x the real size, 30% mildly degraded
  (JPEG, blur).
- "hard": 720-1680 px, type 0.85-1.1x the real size (collector digits about 7 px high on the smallest scans), 80%
  degraded with blur 0.8-1.4 px, rotation up to 2 degrees, noise and JPEG 50-80.

The fonts come from PyPI packages (`font-lato`, `font-manrope`, `font-hanken-grotesk`, `font-caladea`, in the
project's `dev` extra), so a fresh `make test` has them without a system install.
"""

from __future__ import annotations

import importlib
import io
import random
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from PIL import Image

from stage_e_dagster.demo.catalog import set_printed_total
from stage_e_dagster.demo.info import InfoStyle, layout_of_card
from stage_e_dagster.demo.render import Degradation, render_scan
from stage_e_dagster.domain.evidence.read_catalog import ReadCatalog
from stage_e_dagster.domain.printed_lines import MODERN, RARITY_FIRST

FONT_PACKAGES = ("font_lato", "font_manrope", "font_hanken_grotesk", "font_caladea")


@lru_cache(maxsize=1)
def unseen_fonts() -> tuple[str, ...]:
    """Paths of the regular face of each installed font package; raises naming the packages when none is."""
    found: list[str] = []
    for package in FONT_PACKAGES:
        try:
            module = importlib.import_module(package)
        except ImportError:
            continue
        files = Path(module.__file__ or "").parent / "files"
        regular = sorted(p for p in files.glob("*-Regular.*") if p.suffix in (".ttf", ".otf"))
        if regular:
            found.append(str(regular[0]))
    if not found:
        names = ", ".join(p.replace("_", "-") for p in FONT_PACKAGES)
        raise RuntimeError(f"no font package installed for the hard scans; pip install {names}")
    return tuple(found)


def heavy_damage(rng: random.Random) -> Degradation:
    """Phone-photo and small-export damage: blur 0.8-1.4 px, rotation up to 2 deg, noise, JPEG 50-80."""
    return Degradation(
        jpeg_quality=rng.randint(50, 80),
        blur_radius=round(rng.uniform(0.8, 1.4), 2),
        noise_sigma=round(rng.uniform(2.0, 8.0), 2),
        rotation_deg=round(rng.uniform(-2.0, 2.0), 2),
        scale=round(rng.uniform(0.98, 1.02), 3),
    )


@dataclass(frozen=True)
class Profile:
    """A kind of data set: scan heights to draw from, collector type size range (relative to the demo's), share
    degraded and how, and whether the bottom lines are styled (unseen fonts and layouts) or the demo's own."""

    name: str
    heights: tuple[int, ...]
    sizes: tuple[float, float]
    degraded_fraction: float
    damage: Callable[[random.Random], Degradation]
    styled: bool = True


PROFILES = {
    "demo": Profile("demo", (1040, 1680), (1.0, 1.0), 0.3, Degradation.random, styled=False),
    "unseen": Profile("unseen", (1040, 1200, 1360, 1520, 1680), (0.9, 1.15), 0.3, Degradation.random),
    "hard": Profile("hard", (720, 880, 1040, 1200, 1360, 1520, 1680), (0.85, 1.1), 0.8, heavy_damage),
}


@dataclass(frozen=True)
class HardScan:
    """One planned scan: the printing it shows and everything needed to render it again, identically."""

    card: dict[str, Any]
    long_side: int
    bleed: bool
    style: InfoStyle
    degradation: Degradation | None
    seed: int

    def render(self) -> Image.Image:
        """The scan as an RGB image."""
        return render_scan(self.card, long_side=self.long_side, bleed=self.bleed, seed=self.seed,
                           degradation=self.degradation, style=self.style)

    def jpeg(self, quality: int = 92) -> bytes:
        """The scan as JPEG bytes (a degraded scan already went through its own JPEG damage)."""
        buffer = io.BytesIO()
        self.render().save(buffer, "JPEG", quality=quality)
        return buffer.getvalue()


def random_style(card: dict[str, Any], rng: random.Random, sizes: tuple[float, float] = (0.9, 1.15)) -> InfoStyle:
    """An unseen font at a type size in `sizes` (relative to the era's real size), offset a little; on the 2003
    frame "Illus." or the paintbrush; a few reprints from The List; a tenth of modern scans premium (foil)."""
    offset = (round(rng.uniform(-0.008, 0.012), 4), round(rng.uniform(-0.003, 0.003), 4))
    modern = layout_of_card(card) in (MODERN, RARITY_FIRST)
    return InfoStyle(font=rng.choice(unseen_fonts()), size=round(rng.uniform(*sizes), 3), offset=offset,
                     credit=rng.choice(("brush", "illus")), list_mark=modern and rng.random() < 0.04,
                     foil=modern and rng.random() < 0.1)


def plan_scans(catalog: list[dict[str, Any]], count: int, profile: str | Profile, seed: int = 0) -> list[HardScan]:
    """`count` scans of random printings of `catalog` under `profile` (a name in `PROFILES` or a `Profile`)."""
    chosen = PROFILES[profile] if isinstance(profile, str) else profile
    rng = random.Random(f"hard:{chosen.name}:{seed}")
    scans = []
    for _ in range(count):
        card = rng.choice(catalog)
        damage = chosen.damage(rng) if rng.random() < chosen.degraded_fraction else None
        style = random_style(card, rng, chosen.sizes) if chosen.styled else InfoStyle()
        scans.append(HardScan(card, rng.choice(chosen.heights), rng.random() < 0.5, style, damage, rng.getrandbits(31)))
    return scans


def read_catalog_of(catalog: list[dict[str, Any]]) -> ReadCatalog:
    """What the collector reader may know of a generated catalogue: printings, printed totals, codeless sets."""
    codes = {str(card["set"]) for card in catalog}
    return ReadCatalog.build(
        ((str(card["name"]), str(card["set"]), str(card["collector_number"])) for card in catalog),
        totals={code: set_printed_total(code) for code in codes},
        codeless={str(card["set"]) for card in catalog if layout_of_card(card) not in (MODERN, RARITY_FIRST)},
        layouts=layouts_by_set(catalog),
    )


def layouts_by_set(catalog: list[dict[str, Any]]) -> dict[str, set[str]]:
    """Each set's collector-line layouts, from its printings' frames and release days."""
    out: dict[str, set[str]] = {}
    for card in catalog:
        out.setdefault(str(card["set"]), set()).add(layout_of_card(card))
    return out
