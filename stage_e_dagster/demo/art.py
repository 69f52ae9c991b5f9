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
    # The subject, placed around the art box's centre; its kind is seeded by the name too.
    box = layout.ART_BOX
    sx = (layout.BLEED_MM + (box[0] + box[2]) / 2 * layout.TRIM_MM[0]) / (layout.TRIM_MM[0] + 2 * layout.BLEED_MM)
    sy = (layout.BLEED_MM + (box[1] + box[3]) / 2 * layout.TRIM_MM[1]) / (layout.TRIM_MM[1] + 2 * layout.BLEED_MM)
    scx, scy = (sx + rng.uniform(-0.12, 0.12)) * w, (sy + rng.uniform(-0.03, 0.05)) * h
    size = rng.uniform(0.1, 0.18) * w
    subject = _mix(rng.choice(_PALETTES)[rng.randrange(3)], (0, 0, 0), rng.uniform(0.1, 0.5))
    _SUBJECTS[rng.randrange(len(_SUBJECTS))](draw, rng, scx, scy, size, subject)
    for _ in range(rng.randint(2, 5)):  # strokes: spears, rays, branches, rain
        x0, y0 = rng.uniform(0, w), rng.uniform(0, h)
        angle, length = rng.uniform(0, math.pi), rng.uniform(0.05, 0.3) * w
        draw.line(
            (x0, y0, x0 + length * math.cos(angle), y0 + length * math.sin(angle)),
            fill=_mix(rng.choice((sky, mid, ground)), subject, 0.5),
            width=rng.randint(1, 4),
        )
    return img.filter(ImageFilter.GaussianBlur(1.2))


Draw = ImageDraw.ImageDraw
Colour = tuple[int, int, int]


def _beast(draw: Draw, rng: random.Random, x: float, y: float, r: float, c: Colour) -> None:
    """A four-legged creature: body, neck and head, legs, tail; sometimes wings."""
    face = rng.choice((-1, 1))
    draw.ellipse((x - r, y - r * 0.5, x + r, y + r * 0.45), fill=c)
    hx, hy = x + face * r * 1.1, y - r * 0.8
    draw.line((x + face * r * 0.6, y - r * 0.1, hx, hy), fill=c, width=max(2, int(r * 0.35)))
    draw.ellipse((hx - r * 0.3, hy - r * 0.25, hx + r * 0.3, hy + r * 0.25), fill=c)
    for k in (-0.7, -0.35, 0.35, 0.7):
        draw.line((x + k * r, y + r * 0.2, x + k * r * 1.1, y + r * 1.2), fill=c, width=max(2, int(r * 0.16)))
    draw.line((x - face * r, y, x - face * r * 1.8, y - r * rng.uniform(-0.3, 0.6)), fill=c, width=max(1, int(r * 0.1)))
    if rng.random() < 0.5:
        draw.polygon([(x, y - r * 0.3), (x - face * r * 0.6, y - r * 1.9), (x + face * r * 0.9, y - r * 0.5)], fill=c)


def _figure(draw: Draw, rng: random.Random, x: float, y: float, r: float, c: Colour) -> None:
    """A robed figure with a staff or blade and a glowing focus."""
    draw.polygon([(x, y - r * 1.2), (x - r * 0.8, y + r * 1.5), (x + r * 0.8, y + r * 1.5)], fill=c)
    draw.ellipse((x - r * 0.3, y - r * 1.75, x + r * 0.3, y - r * 1.15), fill=c)
    side = rng.choice((-1, 1))
    top = (x + side * r * 0.9, y - r * 2.0)
    draw.line((x + side * r * 0.6, y + r * 1.5, *top), fill=_mix(c, (0, 0, 0), 0.4), width=max(2, int(r * 0.1)))
    glow = _mix(c, (255, 250, 210), 0.75)
    draw.ellipse((top[0] - r * 0.2, top[1] - r * 0.2, top[0] + r * 0.2, top[1] + r * 0.2), fill=glow)


def _tower(draw: Draw, rng: random.Random, x: float, y: float, r: float, c: Colour) -> None:
    """A keep of towers with pointed roofs and lit windows."""
    for k in range(rng.randint(2, 4)):
        tx, tw, th = x + (k - 1.2) * r * 0.7, r * rng.uniform(0.3, 0.45), r * rng.uniform(1.4, 2.6)
        draw.rectangle((tx - tw, y + r * 1.4 - th, tx + tw, y + r * 1.4), fill=c)
        draw.polygon([(tx - tw * 1.3, y + r * 1.4 - th), (tx, y + r * 0.6 - th), (tx + tw * 1.3, y + r * 1.4 - th)],
                     fill=_mix(c, (0, 0, 0), 0.3))
        draw.rectangle((tx - tw * 0.25, y + r * 1.6 - th, tx + tw * 0.25, y + r * 1.8 - th), fill=(250, 220, 120))


def _tree(draw: Draw, rng: random.Random, x: float, y: float, r: float, c: Colour) -> None:
    """A great tree: trunk, branches and a crown of overlapping blobs."""
    trunk = _mix(c, (60, 40, 20), 0.6)
    draw.polygon([(x - r * 0.25, y + r * 1.6), (x - r * 0.12, y - r * 0.3), (x + r * 0.12, y - r * 0.3),
                  (x + r * 0.25, y + r * 1.6)], fill=trunk)
    for _ in range(rng.randint(5, 8)):
        bx, by, br = x + rng.uniform(-1, 1) * r, y - r * rng.uniform(0.4, 1.4), r * rng.uniform(0.4, 0.7)
        draw.ellipse((bx - br, by - br, bx + br, by + br), fill=_mix(c, (40, 120, 50), rng.uniform(0.2, 0.6)))


def _crystals(draw: Draw, rng: random.Random, x: float, y: float, r: float, c: Colour) -> None:
    """A cluster of shards with light facets."""
    for _ in range(rng.randint(4, 7)):
        a = rng.uniform(-1.1, 1.1)
        length, width = r * rng.uniform(1.0, 2.2), r * rng.uniform(0.18, 0.35)
        tip = (x + math.sin(a) * length, y + r - math.cos(a) * length)
        base_l = (x - width * math.cos(a), y + r - width * math.sin(a))
        base_r = (x + width * math.cos(a), y + r + width * math.sin(a))
        draw.polygon([base_l, tip, base_r], fill=c)
        draw.polygon([base_l, tip, ((base_l[0] + base_r[0]) / 2, (base_l[1] + base_r[1]) / 2)],
                     fill=_mix(c, (255, 255, 255), 0.35))


def _blob(draw: Draw, rng: random.Random, x: float, y: float, r: float, c: Colour) -> None:
    """A looming elemental mass with a glowing eye."""
    sides = rng.choice((5, 7, 9, 40))
    turn = rng.uniform(0, math.pi)
    points = []
    for k in range(sides):
        reach, angle = r * 1.3 * (1 + 0.35 * rng.random()), turn + 2 * math.pi * k / sides
        points.append((x + reach * math.cos(angle), y + reach * math.sin(angle)))
    draw.polygon(points, fill=c)
    gx, gy = x + rng.uniform(-0.4, 0.4) * r, y + rng.uniform(-0.4, 0.4) * r
    draw.ellipse((gx - r * 0.18, gy - r * 0.18, gx + r * 0.18, gy + r * 0.18), fill=_mix(c, (255, 250, 220), 0.7))


_SUBJECTS = (_beast, _beast, _figure, _figure, _tower, _tree, _crystals, _blob)


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
