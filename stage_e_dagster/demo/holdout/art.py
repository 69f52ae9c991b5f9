"""Pictures and set symbols for the held-out scans, written apart from the first renderer's.

Art is a smooth field of colour with ridges and a few blobs, seeded by the card's name and set (reprints have new
art, as they mostly do). A set symbol is a silhouette built from a seeded shield, crescent, chevrons or rings,
with a cut-out; `reference_symbol` is the glyph on white that a set list would supply.
"""

from __future__ import annotations

import math
import random
from functools import lru_cache

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

from stage_e_dagster.demo.holdout.catalog import stable_digest

_SS = 4


def picture(name: str, set_code: str, size: tuple[int, int]) -> Image.Image:
    """An RGB picture of `size` for the card `name` printed in `set_code`."""
    rng = np.random.default_rng(stable_digest("art", name, set_code))
    w, h = 72, max(8, round(72 * size[1] / max(1, size[0])))
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    base = rng.uniform(30, 225, 3).astype(np.float32)
    tilt = rng.uniform(-1.5, 1.5, 3).astype(np.float32)
    field = base + tilt * (yy[..., None] - h / 2) + rng.uniform(-0.8, 0.8, 3).astype(np.float32) * xx[..., None]
    for _ in range(int(rng.integers(2, 5))):
        fx, fy, phase = rng.uniform(0.05, 0.3), rng.uniform(0.05, 0.3), rng.uniform(0, math.tau)
        field += rng.uniform(10, 40) * np.sin(fx * xx + fy * yy + phase)[..., None] * rng.uniform(0.3, 1, 3)
    for _ in range(int(rng.integers(2, 6))):
        cx, cy, r = rng.uniform(0, w), rng.uniform(0, h), rng.uniform(4, 18)
        blob = np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * r * r))
        field += blob[..., None] * rng.uniform(-90, 90, 3)
    small = Image.fromarray(np.clip(field, 0, 255).astype(np.uint8), "RGB")
    return small.resize(size, Image.Resampling.BICUBIC).filter(ImageFilter.SMOOTH)


def _glyph(code: str, side: int) -> Image.Image:
    """The set's silhouette as a mask (L, 255 = glyph) of `side` pixels, drawn supersampled."""
    rng = random.Random(stable_digest("symbol", code.lower()))
    s = side * _SS
    mask = Image.new("L", (s, s), 0)
    draw = ImageDraw.Draw(mask)
    kind = rng.randrange(4)
    c, r = s / 2, s * 0.46
    if kind == 0:  # shield
        top, mid = s * 0.06, s * rng.uniform(0.45, 0.6)
        draw.polygon([(c - r, top), (c + r, top), (c + r, mid), (c, s * 0.96), (c - r, mid)], fill=255)
    elif kind == 1:  # crescent
        draw.ellipse((c - r, c - r, c + r, c + r), fill=255)
        off = r * rng.uniform(0.35, 0.6)
        turn = rng.uniform(0, math.tau)
        ox, oy = c + off * math.cos(turn), c + off * math.sin(turn)
        draw.ellipse((ox - r * 0.8, oy - r * 0.8, ox + r * 0.8, oy + r * 0.8), fill=0)
    elif kind == 2:  # chevrons
        for k in range(rng.randint(2, 3)):
            y0 = s * (0.12 + 0.28 * k)
            draw.polygon([(s * 0.05, y0), (c, y0 + s * 0.25), (s * 0.95, y0), (s * 0.95, y0 + s * 0.14),
                          (c, y0 + s * 0.39), (s * 0.05, y0 + s * 0.14)], fill=255)
    else:  # rings and a bar
        draw.ellipse((c - r, c - r, c + r, c + r), fill=255)
        draw.ellipse((c - r * 0.62, c - r * 0.62, c + r * 0.62, c + r * 0.62), fill=0)
        draw.ellipse((c - r * 0.3, c - r * 0.3, c + r * 0.3, c + r * 0.3), fill=255)
        angle = rng.uniform(0, math.pi)
        dx, dy = math.cos(angle) * r, math.sin(angle) * r
        draw.line((c - dx, c - dy, c + dx, c + dy), fill=255, width=round(s * 0.09))
    points = rng.randint(3, 7)
    spike = [(c + s * 0.2 * math.cos(math.tau * k / points) * (1 if k % 2 else 0.4),
              c + s * 0.2 * math.sin(math.tau * k / points) * (1 if k % 2 else 0.4)) for k in range(points)]
    draw.polygon(spike, fill=0 if kind != 2 else 255)
    return mask.resize((side, side), Image.Resampling.LANCZOS)


@lru_cache(maxsize=256)
def symbol(code: str, side: int) -> Image.Image:
    """The set symbol's mask at `side` pixels (cached)."""
    return _glyph(code, max(8, side))


def reference_symbol(code: str, side: int = 160) -> Image.Image:
    """The symbol as a set list supplies it: black glyph on white, with a wide margin."""
    canvas = Image.new("RGB", (side, side), (255, 255, 255))
    glyph = symbol(code, round(side * 0.55))
    offset = (side - glyph.width) // 2
    canvas.paste((0, 0, 0), (offset, offset, offset + glyph.width, offset + glyph.height), glyph)
    return canvas
