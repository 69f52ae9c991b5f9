"""Procedural card art seeded by the card name only, so every reprint of a name shows the same picture.

The picture is painted once per name on a canvas covering the whole card including bleed; a framed card shows
the `layout.ART_BOX` window of it and a borderless card shows all of it, so both share the art-box content.
"""

from __future__ import annotations

import hashlib
import math
import random
from functools import lru_cache

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

from stage_e_dagster.domain import layout

_BASE_W = 360
_BASE_H = round(_BASE_W / layout.BLEED_ASPECT)
_PALETTES = (
    ((250, 196, 120), (92, 60, 110), (40, 30, 50)),
    ((170, 210, 240), (60, 110, 150), (30, 60, 50)),
    ((240, 150, 90), (150, 50, 40), (50, 25, 20)),
    ((200, 230, 200), (90, 150, 90), (30, 60, 35)),
    ((220, 220, 235), (110, 110, 140), (45, 45, 60)),
    ((255, 230, 170), (190, 130, 60), (70, 50, 30)),
    ((150, 170, 220), (40, 40, 100), (15, 15, 35)),
)


def _mix(a: tuple[int, ...], b: tuple[int, ...], t: float) -> tuple[int, int, int]:
    return (round(a[0] + (b[0] - a[0]) * t), round(a[1] + (b[1] - a[1]) * t), round(a[2] + (b[2] - a[2]) * t))


@lru_cache(maxsize=512)
def _base_art(name: str) -> Image.Image:
    """The full-bleed painting for `name` at the base resolution."""
    seed = int.from_bytes(hashlib.sha256(f"art:{name}".encode()).digest()[:8], "big")
    rng = random.Random(seed)
    sky, mid, ground = rng.choice(_PALETTES)
    w, h = _BASE_W, _BASE_H
    horizon = rng.uniform(0.45, 0.7)
    # Sky gradient, then colour clouds of smooth noise.
    t = np.clip(np.linspace(0, 1, h) / horizon, 0, 1)[:, None, None]
    canvas = np.asarray(sky, np.float32) * (1 - t) + np.asarray(mid, np.float32) * t
    canvas = np.broadcast_to(canvas, (h, w, 3)).copy()
    noise_rng = np.random.default_rng(seed)
    clouds = Image.fromarray(noise_rng.integers(0, 255, (9, 7, 3), dtype=np.uint8), "RGB").resize(
        (w, h), Image.Resampling.BICUBIC)
    canvas = canvas * 0.72 + np.asarray(clouds, np.float32) * 0.28
    img = Image.fromarray(np.clip(canvas, 0, 255).astype(np.uint8), "RGB")
    draw = ImageDraw.Draw(img)
    # A sun or moon.
    cx, cy, r = rng.uniform(0.15, 0.85) * w, rng.uniform(0.1, 0.35) * h, rng.uniform(0.04, 0.1) * w
    draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=_mix(sky, (255, 255, 240), 0.7))
    # Two ridges of hills, the nearer one darker.
    for layer, colour in enumerate((_mix(mid, ground, 0.45), ground)):
        base_y = h * (horizon + 0.08 * layer)
        points = [(0.0, float(h))]
        y = base_y
        for x in range(0, w + 12, 12):
            y = min(h * 0.95, max(h * 0.25, y + rng.uniform(-14, 14) - (y - base_y) * 0.15))
            points.append((float(x), y))
        points.append((float(w), float(h)))
        draw.polygon(points, fill=colour)
    # The subject: a bold silhouette with a highlight, placed around the art box's centre.
    box = layout.ART_BOX
    sx = (layout.BLEED_MM + (box[0] + box[2]) / 2 * layout.TRIM_MM[0]) / (layout.TRIM_MM[0] + 2 * layout.BLEED_MM)
    sy = (layout.BLEED_MM + (box[1] + box[3]) / 2 * layout.TRIM_MM[1]) / (layout.TRIM_MM[1] + 2 * layout.BLEED_MM)
    scx, scy = (sx + rng.uniform(-0.12, 0.12)) * w, (sy + rng.uniform(-0.03, 0.05)) * h
    size = rng.uniform(0.12, 0.22) * w
    subject = _mix(rng.choice(_PALETTES)[rng.randrange(3)], (0, 0, 0), rng.uniform(0.0, 0.4))
    sides = rng.choice((3, 5, 7, 9, 40))
    turn = rng.uniform(0, math.pi)
    body = [(scx + size * (1 + 0.35 * rng.random()) * math.cos(turn + 2 * math.pi * k / sides),
             scy + size * (1 + 0.35 * rng.random()) * math.sin(turn + 2 * math.pi * k / sides))
            for k in range(sides)]
    draw.polygon(body, fill=subject)
    hr = size * 0.35
    draw.ellipse((scx - hr, scy - size * 0.9 - hr, scx + hr, scy - size * 0.9 + hr), fill=subject)
    glow = _mix(subject, (255, 250, 220), 0.6)
    gx, gy = scx + rng.uniform(-0.4, 0.4) * size, scy + rng.uniform(-0.4, 0.4) * size
    draw.ellipse((gx - size * 0.15, gy - size * 0.15, gx + size * 0.15, gy + size * 0.15), fill=glow)
    for _ in range(rng.randint(3, 7)):  # strokes: spears, rays, branches
        x0, y0 = rng.uniform(0, w), rng.uniform(0, h)
        angle, length = rng.uniform(0, math.pi), rng.uniform(0.1, 0.4) * w
        draw.line((x0, y0, x0 + length * math.cos(angle), y0 + length * math.sin(angle)),
                  fill=_mix(rng.choice((sky, mid, ground)), subject, 0.5), width=rng.randint(2, 6))
    return img.filter(ImageFilter.GaussianBlur(1.2))


def _window(b: layout.Box) -> tuple[float, float, float, float]:
    """A trim-fraction box as a pixel box of the base canvas."""
    bx = _BASE_W * layout.BLEED_MM / (layout.TRIM_MM[0] + 2 * layout.BLEED_MM)
    by = _BASE_H * layout.BLEED_MM / (layout.TRIM_MM[1] + 2 * layout.BLEED_MM)
    tw, th = _BASE_W - 2 * bx, _BASE_H - 2 * by
    return (bx + b[0] * tw, by + b[1] * th, bx + b[2] * tw, by + b[3] * th)


def card_art(name: str, size: tuple[int, int], bleed: bool, full: bool) -> Image.Image:
    """The art of `name` resized to `size`: the art-box window, or (`full`) the whole card with or without bleed."""
    base = _base_art(name)
    if full:
        window = (0.0, 0.0, float(_BASE_W), float(_BASE_H)) if bleed else _window((0.0, 0.0, 1.0, 1.0))
    else:
        window = _window(layout.ART_BOX)
    return base.resize(size, Image.Resampling.BICUBIC, box=window)
