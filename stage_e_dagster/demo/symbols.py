"""Procedural set symbols, one distinctive glyph per set code, and the set-symbol perceptual hash.

`symbol_phash` is the one normalisation both the reference import (hashing `render_set_symbol` output) and the
evidence extractor (hashing the `layout.SYMBOL_CROP` region of a scan) call, so the two hashes are comparable:

1. grayscale; the background level is the median pixel (the glyph must cover under half the image: true for
   `render_set_symbol` output and for a scan's SYMBOL_CROP);
2. foreground = pixels differing from the background by more than ~40% of the crop's contrast, so a dark glyph
   on a light plate and a light glyph on a dark plate give the same mask (polarity independent);
3. keep the 8-connected foreground components that reach into the central 60% of the image and do not touch
   its border (drops frame and plate edges; the glyph sits in the centre of both kinds of image);
4. weight the component (grown 2 px for its antialiased rim) by ink strength, trim to its bounding box, pad
   to a centred square, resize to 64 x 64 (Lanczos), `imagehash.phash` (hash size 8);
5. the 64-bit hash as a signed 64-bit integer (Postgres BIGINT).
"""

from __future__ import annotations

import hashlib
import math
import random
from functools import lru_cache

import imagehash
import numpy as np
from PIL import Image, ImageDraw

_SUPERSAMPLE = 4
_MARGIN = 0.06  # fraction of a scan's symbol canvas left empty on every side
_REFERENCE_MARGIN = 0.2  # the reference image keeps the glyph under half its area, as `symbol_phash` needs


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


def _reconstruct(seed: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Every 8-connected component of `mask` that contains a `seed` pixel."""
    seed = seed & mask
    while True:
        grown = seed.copy()
        grown[1:, :] |= seed[:-1, :]
        grown[:-1, :] |= seed[1:, :]
        grown[:, 1:] |= grown[:, :-1]
        grown[:, :-1] |= grown[:, 1:]
        grown &= mask
        if np.array_equal(grown, seed):
            return seed
        seed = grown


def _glyph_components(mask: np.ndarray) -> np.ndarray:
    """Components reaching into the central 60% of the image and not touching its border."""
    h, w = mask.shape
    central = np.zeros_like(mask)
    central[int(h * 0.2) : int(h * 0.8) + 1, int(w * 0.2) : int(w * 0.8) + 1] = True
    edge = np.zeros_like(mask)
    edge[0, :] = edge[-1, :] = edge[:, 0] = edge[:, -1] = True
    return _reconstruct(central, mask) & ~_reconstruct(edge, mask)


def symbol_glyph(img: Image.Image) -> np.ndarray | None:
    """The glyph's ink strength (0..1, float32) trimmed to its bounding box: steps 1-3 of `symbol_phash`."""
    gray = np.asarray(img.convert("L"), dtype=np.float32)
    if gray.size == 0:
        return None
    diff = np.abs(gray - float(np.median(gray)))
    contrast = float(np.percentile(diff, 99.5))
    if contrast < 24:
        return None
    glyph = _glyph_components(diff > contrast * 0.4)
    rows, cols = np.nonzero(glyph)
    if rows.size == 0:
        return None
    # Keep the antialiased rim: grow the component by 2 px and weight it by ink strength.
    for _ in range(2):
        grown = glyph.copy()
        grown[1:, :] |= glyph[:-1, :]
        grown[:-1, :] |= glyph[1:, :]
        grown[:, 1:] |= glyph[:, :-1]
        grown[:, :-1] |= glyph[:, 1:]
        glyph = grown
    ink = np.clip(diff / contrast, 0.0, 1.0) * glyph
    return ink[rows.min() : rows.max() + 1, cols.min() : cols.max() + 1]


def symbol_phash(img: Image.Image) -> int | None:
    """Perceptual hash of the set symbol in `img` (a reference symbol or a scan's SYMBOL_CROP), signed 64-bit."""
    glyph = symbol_glyph(img)
    if glyph is None:
        return None
    h, w = glyph.shape
    side = max(h, w)
    square = np.zeros((side, side), dtype=np.float32)
    top, left = (side - h) // 2, (side - w) // 2
    square[top : top + h, left : left + w] = glyph
    normalised = Image.fromarray((square * 255).astype(np.uint8), "L").resize((64, 64), Image.Resampling.LANCZOS)
    value = int(str(imagehash.phash(normalised)), 16)
    return value - (1 << 64) if value >= 1 << 63 else value


def phash_distance(a: int, b: int) -> int:
    """Hamming distance between two signed 64-bit hashes."""
    return bin((a ^ b) & ((1 << 64) - 1)).count("1")
