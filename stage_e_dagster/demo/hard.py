"""Harder generated scans, for tests and benchmarks only: fonts the demo never draws, varied type sizes and offsets,
the "credit" and "old-style" collector lines (see `demo.info`), more scan sizes and heavier damage.

Two profiles:

- "unseen": 1040-1680 px, fonts and layouts the demo renderer does not use, 30% mildly degraded (JPEG, blur).
- "hard": 720-1680 px, 80% degraded with blur 0.8-1.4 px, rotation up to 2 degrees, noise and JPEG 50-80.

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

from stage_e_dagster.demo.info import InfoStyle
from stage_e_dagster.demo.render import Degradation, render_scan

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
    """A kind of hard data set: scan heights to draw from, share degraded and how."""

    name: str
    heights: tuple[int, ...]
    degraded_fraction: float
    damage: Callable[[random.Random], Degradation]


PROFILES = {
    "unseen": Profile("unseen", (1040, 1200, 1360, 1520, 1680), 0.3, Degradation.random),
    "hard": Profile("hard", (720, 880, 1040, 1200, 1360, 1520, 1680), 0.8, heavy_damage),
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


def random_style(card: dict[str, Any], rng: random.Random) -> InfoStyle:
    """An unseen font at 0.65-1.1x the demo's type size, offset a little; old frames mostly in the old-style
    layout, modern ones mostly with the artist credit on the set-code line."""
    old = card.get("frame") in ("1997", "2003")
    layout = rng.choices(("old-style", "demo") if old else ("credit", "demo"), (0.7, 0.3))[0]
    offset = (round(rng.uniform(-0.012, 0.02), 4), round(rng.uniform(-0.006, 0.006), 4))
    return InfoStyle(font=rng.choice(unseen_fonts()), size=round(rng.uniform(0.65, 1.1), 3), offset=offset,
                     layout=layout)


def plan_scans(catalog: list[dict[str, Any]], count: int, profile: str | Profile, seed: int = 0) -> list[HardScan]:
    """`count` scans of random printings of `catalog` under `profile` (a name in `PROFILES` or a `Profile`)."""
    chosen = PROFILES[profile] if isinstance(profile, str) else profile
    rng = random.Random(f"hard:{chosen.name}:{seed}")
    scans = []
    for _ in range(count):
        card = rng.choice(catalog)
        damage = chosen.damage(rng) if rng.random() < chosen.degraded_fraction else None
        scans.append(HardScan(card, rng.choice(chosen.heights), rng.random() < 0.5, random_style(card, rng),
                              damage, rng.getrandbits(31)))
    return scans
