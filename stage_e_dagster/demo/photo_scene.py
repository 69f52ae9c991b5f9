"""Surfaces and light for drawn card photos: wood, cloth, a playmat and a hand's skin, uneven light, a glare band.

Every surface is painted at a fraction of the photo's size and scaled up (a table top has no detail a finder
needs), then given a fine grain at full size from a small tiled patch, so a 12-megapixel photo costs a few tens of
milliseconds. Everything is drawn from the numpy generator it is given, so a seed draws the same photo.
"""

from __future__ import annotations

import cv2
import numpy as np

BACKGROUNDS = ("wood", "cloth", "playmat", "skin")

_WOOD = (((205, 160, 110), (150, 100, 60)), ((120, 78, 45), (70, 42, 25)), ((225, 195, 150), (180, 140, 95)),
         ((95, 60, 40), (45, 28, 20)), ((170, 130, 95), (110, 80, 55)))
_CLOTH = ((60, 62, 66), (30, 40, 80), (35, 95, 55), (20, 20, 22), (225, 225, 220), (200, 185, 160),
          (140, 30, 35), (110, 110, 115), (75, 55, 95))
SKIN_TONES = ((255, 219, 190), (236, 188, 155), (205, 145, 110), (160, 105, 75), (110, 70, 48), (80, 52, 38))


def _smooth_noise(rng: np.random.Generator, shape: tuple[int, int], cells: int, channels: int = 1) -> np.ndarray:
    """Noise in [0, 1] with about `cells` blobs along the long side, at `shape` (h, w)."""
    h, w = shape
    ch, cw = max(2, round(cells * h / max(h, w))), max(2, round(cells * w / max(h, w)))
    small = rng.random((ch, cw, channels), dtype=np.float32)
    out = cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC)
    return np.clip(out.reshape(h, w, channels), 0.0, 1.0)


def _mix(a: np.ndarray, b: np.ndarray, t: np.ndarray) -> np.ndarray:
    return a * (1.0 - t) + b * t


def _wood(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    h, w = shape
    light, dark = (np.asarray(c, np.float32) for c in _WOOD[rng.integers(len(_WOOD))])
    angle = rng.uniform(0, np.pi)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    along = xx * np.cos(angle) + yy * np.sin(angle)
    across = -xx * np.sin(angle) + yy * np.cos(angle)
    warp = _smooth_noise(rng, shape, 6)[..., 0] * rng.uniform(20, 60)
    period = rng.uniform(0.02, 0.06) * max(h, w)
    grain = 0.5 + 0.5 * np.sin(2 * np.pi * (across + warp + 0.02 * along) / period)
    streak = cv2.resize(rng.random((max(2, h // 2), 8), dtype=np.float32), (w, h), interpolation=cv2.INTER_LINEAR)
    if abs(np.cos(angle)) < 0.7:  # keep the fine streaks along the grain
        streak = cv2.resize(rng.random((8, max(2, w // 2)), dtype=np.float32), (w, h), interpolation=cv2.INTER_LINEAR)
    t = np.clip(grain ** 1.5 * 0.75 + streak * 0.25, 0, 1)[..., None]
    # Planks: a dark seam every so often across the grain.
    plank = rng.uniform(0.25, 0.5) * max(h, w)
    seam = (np.abs(((across + rng.uniform(0, plank)) % plank) - plank / 2) > plank / 2 - 1.2).astype(np.float32)
    return _mix(light, dark, t) * (1.0 - 0.45 * seam[..., None])


def _cloth(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    base = np.asarray(_CLOTH[rng.integers(len(_CLOTH))], np.float32)
    folds = _smooth_noise(rng, shape, int(rng.integers(3, 8)))[..., 0]
    return base * (0.8 + 0.35 * folds[..., None])


def _playmat(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    h, w = shape
    dark = rng.random() < 0.5
    clouds = _smooth_noise(rng, shape, int(rng.integers(3, 9)), 3) * (110 if dark else 255)
    img = np.ascontiguousarray(clouds)
    for _ in range(int(rng.integers(2, 6))):  # a few big painted shapes
        colour = tuple(float(c) for c in rng.integers(0, 255, 3))
        centre = (int(rng.integers(0, w)), int(rng.integers(0, h)))
        axes = (int(rng.integers(w // 12, w // 3)), int(rng.integers(h // 12, h // 3)))
        cv2.ellipse(img, centre, axes, float(rng.uniform(0, 180)), 0, 360, colour, -1, cv2.LINE_AA)
    return cv2.GaussianBlur(img, (0, 0), max(1.0, max(h, w) / 150))


def skin(rng: np.random.Generator, shape: tuple[int, int], tone: tuple[int, int, int] | None = None) -> np.ndarray:
    """A hand's skin: one tone with soft shading and creases."""
    colour = np.asarray(tone or SKIN_TONES[rng.integers(len(SKIN_TONES))], np.float32)
    shade = _smooth_noise(rng, shape, 4)[..., 0]
    return colour * (0.78 + 0.3 * shade[..., None])


def background(kind: str, rng: np.random.Generator, size: tuple[int, int]) -> np.ndarray:
    """A uint8 RGB surface of `size` (w, h): painted at an eighth of the size, scaled up, then grained."""
    w, h = size
    small = (max(8, h // 8), max(8, w // 8))
    if kind == "wood":
        small = (max(8, h // 4), max(8, w // 4))
        painted = _wood(rng, small)
    elif kind == "cloth":
        painted = _cloth(rng, small)
    elif kind == "playmat":
        painted = _playmat(rng, small)
    elif kind == "skin":
        painted = skin(rng, small)
    else:
        raise ValueError(f"unknown background {kind!r}; known: {', '.join(BACKGROUNDS)}")
    full = cv2.resize(np.clip(painted, 0, 255).astype(np.uint8), (w, h), interpolation=cv2.INTER_LINEAR)
    return add_grain(full, rng, 7.0 if kind == "cloth" else 4.0, weave=kind == "cloth")


def add_grain(img: np.ndarray, rng: np.random.Generator, sigma: float, weave: bool = False) -> np.ndarray:
    """`img` (uint8 RGB) with fine grain from a tiled 256-pixel patch (and a cloth weave when asked)."""
    patch = rng.normal(0.0, sigma, (256, 256)).astype(np.float32)
    if weave:
        period = float(rng.uniform(3.0, 7.0))
        yy, xx = np.mgrid[0:256, 0:256].astype(np.float32)
        patch += 2.5 * sigma * np.sin(2 * np.pi * xx / period) * np.sin(2 * np.pi * yy / period)
    h, w = img.shape[:2]
    tiled = np.tile(patch, (h // 256 + 1, w // 256 + 1))[:h, :w]
    out = img.astype(np.int16) + tiled.astype(np.int16)[..., None]
    return np.clip(out, 0, 255).astype(np.uint8)


def light_field(rng: np.random.Generator, size: tuple[int, int], strength: float) -> np.ndarray:
    """A smooth multiplicative light field (h, w) around 1.0: a lamp off to one side and a little mottling."""
    w, h = size
    sw, sh = 48, max(2, round(48 * h / w))
    yy, xx = np.mgrid[0:sh, 0:sw].astype(np.float32)
    lx, ly = rng.uniform(-0.5, 1.5) * sw, rng.uniform(-0.5, 1.5) * sh
    distance = np.hypot(xx - lx, yy - ly) / np.hypot(sw, sh)
    field = 1.0 + strength * (0.35 - distance) + 0.15 * strength * (_smooth_noise(rng, (sh, sw), 4)[..., 0] - 0.5)
    return cv2.resize(field.astype(np.float32), (w, h), interpolation=cv2.INTER_CUBIC)


def glare_band(shape: tuple[int, int], centre: tuple[float, float], angle: float, width: float,
               strength: float) -> np.ndarray:
    """A soft specular band (h, w) in [0, strength] through `centre` at `angle` radians, `width` pixels wide."""
    h, w = shape
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    distance = (xx - centre[0]) * np.sin(angle) - (yy - centre[1]) * np.cos(angle)
    return (strength * np.exp(-((distance / max(width, 1.0)) ** 2))).astype(np.float32)


def motion_blur(img: np.ndarray, length: int, angle: float) -> np.ndarray:
    """`img` smeared along `angle` radians over `length` pixels (a hand that moved while the shutter was open)."""
    if length < 2:
        return img
    kernel = np.zeros((length, length), np.float32)
    c = (length - 1) / 2
    dx, dy = np.cos(angle) * c, np.sin(angle) * c
    cv2.line(kernel, (round(c - dx), round(c - dy)), (round(c + dx), round(c + dy)), 1.0, 1, cv2.LINE_AA)
    kernel /= kernel.sum()
    return cv2.filter2D(img, -1, kernel, borderType=cv2.BORDER_REFLECT)
