"""Planned held-out scans: each a printing, a look, a size and its damage, drawn from one seed, with a manifest
of what it prints.

The "holdout" profile: printings drawn uniformly from the catalogue (whose eras take the real shares of printings,
so the layouts do too), heights 720-1680 px (any height, not a few fixed ones), digits as small as real cards
print them (0.82-1.3% of the card's height by layout, `border.GEOMETRY`: about 6-22 px), 80% of scans damaged
(`Damage.draw`), half of them with bleed.
"""

from __future__ import annotations

import io
import random
from dataclasses import dataclass
from datetime import date
from typing import Any

from PIL import Image

from stage_e_dagster.demo.holdout import type as typeset
from stage_e_dagster.demo.holdout.art import reference_symbol
from stage_e_dagster.demo.holdout.border import GEOMETRY, NUMBER_AT, Drawn, Look
from stage_e_dagster.demo.holdout.catalog import Catalogue, SetEntry, stable_digest
from stage_e_dagster.demo.holdout.damage import Damage
from stage_e_dagster.demo.holdout.lines import Printed, printed_lines
from stage_e_dagster.demo.holdout.render import frame_shape, render_card
from stage_e_dagster.domain.evidence.read_catalog import ReadCatalog
from stage_e_dagster.domain.printed_lines import CENTRED, NUMBERLESS, layout_of

HEIGHTS = (720, 1680)
DAMAGED = 0.8
_LIGHT_INK: tuple[tuple[int, int, int], ...] = ((240, 240, 240), (250, 244, 228), (212, 212, 218))
_DARK_INK: tuple[tuple[int, int, int], ...] = ((16, 16, 16), (48, 40, 36))


@dataclass(frozen=True)
class HoldoutScan:
    """One planned scan; `render` draws it again identically."""

    card: dict[str, Any]
    entry: SetEntry
    height: int
    bleed: bool
    printed: Printed
    look: Look
    damage: Damage | None
    seed: int

    def draw(self) -> tuple[Image.Image, Drawn]:
        """The scan (damaged when planned so) and where its collector lines are in the undamaged image."""
        img, drawn = render_card(self.card, self.printed, self.look, self.height, self.bleed, self.seed)
        if self.damage is not None:
            img = self.damage.apply(img, seed=stable_digest("noise", self.card["id"], self.seed))
        return img, drawn

    def render(self) -> Image.Image:
        """The scan as an RGB image."""
        return self.draw()[0]

    def jpeg(self, quality: int = 92) -> bytes:
        """The scan as JPEG bytes (a damaged scan has already been through its own JPEG damage)."""
        buffer = io.BytesIO()
        self.render().save(buffer, "JPEG", quality=quality)
        return buffer.getvalue()

    @property
    def expected(self) -> tuple[str | None, str | None]:
        """(collector number, set code) a reader should find: the number only where one is printed, the set code
        only where one is printed."""
        number = None if self.printed.number is None else str(self.card["collector_number"])
        return number, self.entry.code if self.printed.prints_code else None

    def manifest(self) -> dict[str, Any]:
        """What the scan prints and how: its layout (`domain.printed_lines.layout_of` of the printing's frame and
        release), lines, style, variants, faces, digit height in pixels, size and damage."""
        trim_height = self.height * 88.0 / (94.0 if self.bleed else 88.0)
        card, printed = self.card, self.printed
        return {
            "card_id": card["id"], "set": self.entry.code, "collector_number": card["collector_number"],
            "layout": layout_of(card["frame"], date.fromisoformat(card["released_at"])), "frame": card["frame"],
            "released_at": card["released_at"], "style": printed.style, "lines": list(printed.lines),
            "number_line": printed.number_line, "number": printed.number, "prints_code": printed.prints_code,
            "legal": printed.legal, "borderless": card.get("border_color") == "borderless",
            "frame_effects": list(card.get("frame_effects") or ()), "list_mark": printed.list_mark,
            "premium": printed.premium, "suffix": printed.suffix, "prefix": printed.prefix, "face": self.look.face,
            "legal_face": self.look.legal_face, "digit_px": round(self.look.cap * trim_height, 2),
            "height": self.height, "bleed": self.bleed,
            "damage": None if self.damage is None else vars(self.damage).copy(),
        }


def _look(printed: Printed, card: dict[str, Any], rng: random.Random) -> Look:
    """A look within the layout's ranges: serif faces on half the old layouts, the legal line always sans."""
    geometry = GEOMETRY[printed.layout]
    serif = printed.layout in (CENTRED, NUMBERLESS) and rng.random() < 0.5
    light = card.get("border_color") != "white"
    return Look(
        face=rng.choice(typeset.SERIF if serif else typeset.SANS),
        legal_face=rng.choice(typeset.SANS),
        cap=round(rng.uniform(*geometry.cap), 5),
        x=round(rng.uniform(*geometry.x), 4),
        baseline=round(rng.uniform(*geometry.baseline), 4),
        gap=round(rng.uniform(*geometry.gap), 3),
        upper=round(rng.uniform(*geometry.upper), 3),
        tracking=round(rng.uniform(-0.02, 0.06), 3),
        border=round(rng.uniform(*frame_shape(card).border), 4),
        ink=rng.choice(_LIGHT_INK if light else _DARK_INK),
        number_at=round(rng.uniform(*NUMBER_AT), 4),
    )


def plan_holdout(catalogue: Catalogue, count: int, seed: int = 0, *, heights: tuple[int, int] = HEIGHTS,
                 damaged: float = DAMAGED) -> list[HoldoutScan]:
    """`count` scans of printings drawn uniformly from `catalogue`, deterministic for `seed`."""
    rng = random.Random(f"holdout-scans:{seed}")
    scans = []
    for _ in range(count):
        card = rng.choice(catalogue.cards)
        entry = catalogue.sets[card["set"]]
        printed = printed_lines(card, entry, rng)
        look = _look(printed, card, rng)
        damage = Damage.draw(rng) if rng.random() < damaged else None
        scans.append(HoldoutScan(card, entry, rng.randint(*heights), rng.random() < 0.5, printed, look, damage,
                                 rng.getrandbits(31)))
    return scans


def read_catalog_of(catalogue: Catalogue) -> ReadCatalog:
    """What the collector reader may know: printings, the set list's printed sizes, and the sets that print no
    set code (legal-number, centred and numberless layouts), and each set's layout (what its frame and release day
    say)."""
    return ReadCatalog.build(
        ((str(c["name"]), str(c["set"]), str(c["collector_number"])) for c in catalogue.cards),
        totals={code: entry.printed_size for code, entry in catalogue.sets.items()},
        codeless={code for code, entry in catalogue.sets.items() if not entry.prints_code},
        layouts={code: {entry.layout} for code, entry in catalogue.sets.items()},
    )


def reference_symbols(catalogue: Catalogue) -> dict[str, Image.Image]:
    """The set list's symbol image of every set, by code."""
    return {code: reference_symbol(code) for code in catalogue.sets}
