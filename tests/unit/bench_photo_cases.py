"""The photo benchmark's photos (`demo.photo`, as `bench/photos.py` draws them) for the finder's tests, and how far
a found card's corners stand from the truth."""

from __future__ import annotations

import math
import random

from PIL import Image

from stage_e_dagster.demo.catalog import generate_catalog
from stage_e_dagster.demo.photo import DrawnPhoto, draw_photo, plan_photo
from stage_e_dagster.demo.render import render_scan
from stage_e_dagster.domain.evidence.card_finder import FoundCard
from stage_e_dagster.domain.evidence.load import load_scan

TOLERANCE = 0.02
"""A found card's corners within this share of the photo's diagonal of the truth."""


def bench_photo(seed: int, index: int, case: str = "single", photos: int = 300,
                skips: int = 12) -> tuple[DrawnPhoto, Image.Image]:
    """The photo benchmark's photo `index` of `case` (as it numbers them: `skips` of each must-skip case after its
    `photos` single ones, 300 and 12 by default) for `seed`, with the same cards, decoded as Stage C."""
    cards = random.Random(seed).sample(generate_catalog(400, seed=37), 60)
    at = index if case == "single" else photos + skips * ("several", "cut-off", "too-small").index(case) + index

    def face(k: int) -> Image.Image:
        return render_scan(cards[k % 60], long_side=1400, bleed=k % 60 % 3 == 0, seed=seed)

    plan = plan_photo(100_000 * seed + (0 if case == "single" else 50_000) + index, case)
    photo = draw_photo(face(at), plan, tuple(face(at + k) for k in (1, 2)) if case == "several" else ())
    return photo, load_scan(photo.jpeg()).image  # type: ignore[union-attr]


def corner_error(found: FoundCard, photo: DrawnPhoto, size: tuple[int, int]) -> float:
    """The found corner farthest from its true place, as a share of the photo's diagonal."""
    w, h = size
    return max(math.hypot((f[0] - t[0]) * w, (f[1] - t[1]) * h)
               for f, t in zip(found.corners, photo.corners, strict=True)) / math.hypot(w, h)
