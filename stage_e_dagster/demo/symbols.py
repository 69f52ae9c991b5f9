"""Procedural set symbols: one distinctive, deterministic glyph per set code.

Glyphs are bold silhouettes (a base shape, an off-centre second shape, cut-outs and a stroke, all seeded by the
set code) so that different sets' symbols are far apart under the canonical set-symbol hash
(`domain.evidence.hashing.symbol_phash`), while a glyph cropped back out of a scan
(`layout.SYMBOL_CROP`) stays close to its reference. The reference image keeps the glyph well inside a white
canvas, the plain background that hash expects.
"""

from __future__ import annotations

import hashlib
import math
import random
from functools import lru_cache

from PIL import Image, ImageDraw

_SUPERSAMPLE = 4
_MARGIN = 0.06  # fraction of a scan's symbol canvas left empty on every side
_REFERENCE_MARGIN = 0.2  # the reference glyph covers well under half the canvas: white is the dominant level


def _rng(set_code: str) -> random.Random:
    digest = hashlib.sha256(f"symbol:{set_code.lower()}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _polygon(cx: float, cy: float, r: float, sides: int, turn: float) -> list[tuple[float, float]]:
    return [
        (cx + r * math.cos(turn + 2 * math.pi * k / sides), cy + r * math.sin(turn + 2 * math.pi * k / sides))
        for k in range(sides)
    ]


def _star(cx: float, cy: float, r: float, points: int, turn: float, inner: float) -> list[tuple[float, float]]:
    out = []
    for k in range(points * 2):
        rad = r if k % 2 == 0 else r * inner
        angle = turn + math.pi * k / points
        out.append((cx + rad * math.cos(angle), cy + rad * math.sin(angle)))
    return out


def _draw_shape(draw: ImageDraw.ImageDraw, rng: random.Random, cx: float, cy: float, r: float, fill: int) -> None:
    kind = rng.randrange(6)
    turn = rng.uniform(0, 2 * math.pi)
    if kind == 0:
        draw.ellipse((cx - r, cy - r * rng.uniform(0.6, 1.0), cx + r, cy + r), fill=fill)
    elif kind == 1:
        draw.polygon(_polygon(cx, cy, r, rng.choice((3, 4, 5, 6)), turn), fill=fill)
    elif kind == 2:
        draw.polygon(_star(cx, cy, r, rng.choice((3, 4, 5, 6, 7)), turn, rng.uniform(0.35, 0.6)), fill=fill)
    elif kind == 3:
        width = r * rng.uniform(0.35, 0.7)
        draw.polygon(
            [(cx - r, cy - width), (cx + r, cy - width * 0.2), (cx + r, cy + width * 0.2), (cx - r, cy + width)],
            fill=fill,
        )
    elif kind == 4:
        start = rng.uniform(0, 360)
        draw.pieslice((cx - r, cy - r, cx + r, cy + r), start, start + rng.uniform(120, 300), fill=fill)
    else:
        draw.rectangle((cx - r * 0.9, cy - r * 0.3, cx + r * 0.9, cy + r * 0.3), fill=fill)
        draw.rectangle((cx - r * 0.3, cy - r * 0.9, cx + r * 0.3, cy + r * 0.9), fill=fill)


@lru_cache(maxsize=1024)
def symbol_mask(set_code: str, size: int = 128, margin: float = _MARGIN) -> Image.Image:
    """The glyph of `set_code` as an antialiased "L" mask (255 = ink), fitted inside `margin` of a square."""
    rng = _rng(set_code)
    big = size * _SUPERSAMPLE
    canvas = Image.new("L", (big, big), 0)
    draw = ImageDraw.Draw(canvas)
    half = big / 2
    reach = half * 0.88
    # A bold base silhouette, an off-centre second shape, then cut-outs and a stroke for asymmetry.
    _draw_shape(draw, rng, half, half, reach * rng.uniform(0.75, 1.0), 255)
    angle = rng.uniform(0, 2 * math.pi)
    offset = reach * rng.uniform(0.25, 0.5)
    second = reach * rng.uniform(0.35, 0.55)
    _draw_shape(draw, rng, half + offset * math.cos(angle), half + offset * math.sin(angle), second, 255)
    for _ in range(rng.randint(1, 2)):
        a = rng.uniform(0, 2 * math.pi)
        d = reach * rng.uniform(0.0, 0.45)
        _draw_shape(draw, rng, half + d * math.cos(a), half + d * math.sin(a), reach * rng.uniform(0.18, 0.32), 0)
    a = rng.uniform(0, math.pi)
    dx, dy = reach * math.cos(a), reach * math.sin(a)
    draw.line((half - dx, half - dy, half + dx, half + dy), fill=rng.choice((0, 255)), width=int(big * 0.07))
    # Clip to the margin so every glyph keeps a clear border, then re-fit it to fill the canvas.
    bbox = canvas.getbbox()
    if bbox is None:
        canvas = Image.new("L", (big, big), 0)
        ImageDraw.Draw(canvas).ellipse((big * 0.2, big * 0.2, big * 0.8, big * 0.8), fill=255)
        bbox = canvas.getbbox()
        assert bbox is not None
    glyph = canvas.crop(bbox)
    inner = int(big * (1 - 2 * margin))
    scale = inner / max(glyph.size)
    glyph = glyph.resize((max(1, round(glyph.width * scale)), max(1, round(glyph.height * scale))))
    fitted = Image.new("L", (big, big), 0)
    fitted.paste(glyph, ((big - glyph.width) // 2, (big - glyph.height) // 2))
    return fitted.resize((size, size), Image.Resampling.LANCZOS)


def render_set_symbol(set_code: str, size: int = 128) -> Image.Image:
    """The reference set symbol of `set_code`: a black glyph on white, RGB, `size` x `size`, deterministic."""
    mask = symbol_mask(set_code, size, _REFERENCE_MARGIN)
    img = Image.new("RGB", (size, size), (255, 255, 255))
    img.paste((0, 0, 0), (0, 0), mask)
    return img
