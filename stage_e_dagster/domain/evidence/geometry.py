"""Geometry and quality extractors: size, aspect ratio, bleed class, border colour, blur and entropy."""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
from PIL import Image

from stage_e_dagster.domain import layout
from stage_e_dagster.domain.evidence.model import AMBIGUOUS_BORDER

# An aspect ratio further than this (relative) from both the trim and the bleed ratio is "ambiguous".
ASPECT_TOLERANCE = 0.015
# The outer band of the trim rectangle sampled for the border colour, as a fraction of the trim width.
BORDER_BAND = 0.018
_BORDER_INSET = 0.006


@dataclass(frozen=True)
class GeometryFacts:
    """Size and shape of a scan."""

    width: int
    height: int
    aspect_ratio: float
    bleed_class: str  # "trimmed" | "bleed" | "ambiguous"
    has_bleed: bool  # the nearer class, used to place crop boxes even when ambiguous


def classify_bleed(width: int, height: int) -> GeometryFacts:
    """Bleed class from the aspect ratio (orientation-free: the short side over the long side)."""
    aspect = min(width, height) / max(width, height)
    off_trim = abs(aspect - layout.TRIM_ASPECT) / layout.TRIM_ASPECT
    off_bleed = abs(aspect - layout.BLEED_ASPECT) / layout.BLEED_ASPECT
    has_bleed = off_bleed < off_trim
    if min(off_trim, off_bleed) > ASPECT_TOLERANCE:
        bleed_class = "ambiguous"
    else:
        bleed_class = "bleed" if has_bleed else "trimmed"
    return GeometryFacts(width, height, round(width / height, 5), bleed_class, has_bleed)


def trim_of(img: Image.Image, has_bleed: bool) -> layout.TrimRect:
    """The trim rectangle of the working image."""
    return layout.trim_rect(img.width, img.height, has_bleed)


def crop_region(img: Image.Image, trim: layout.TrimRect, box: layout.Box) -> Image.Image:
    """A fractional region of the trim rectangle, clamped to the image."""
    left, top, right, bottom = trim.crop_box(box)
    left, top = max(0, left), max(0, top)
    right, bottom = min(img.width, max(right, left + 1)), min(img.height, max(bottom, top + 1))
    return img.crop((left, top, right, bottom))


def _band_pixels(img: Image.Image, trim: layout.TrimRect) -> np.ndarray:
    """RGB pixels of the outer band just inside the trim edge (top, bottom, left, right strips)."""
    band = BORDER_BAND
    inset = _BORDER_INSET
    strips = [
        (inset, inset, 1 - inset, inset + band * 0.7),
        (inset, 1 - inset - band * 0.7, 1 - inset, 1 - inset),
        (inset, 0.1, inset + band, 0.9),
        (1 - inset - band, 0.1, 1 - inset, 0.9),
    ]
    parts = []
    for strip in strips:
        region = crop_region(img, trim, strip)
        parts.append(np.asarray(region.convert("RGB"), dtype=np.int32).reshape(-1, 3))
    return np.concatenate(parts)


def _twice_median(counts: np.ndarray, n: int) -> int:
    """Twice the median (`np.median`'s: the mean of the middle two of an even count) of `n` integers, from their
    counts by value: whole numbers and a histogram instead of a sort."""
    below = np.cumsum(counts)
    return int(np.searchsorted(below, (n - 1) // 2, side="right") + np.searchsorted(below, n // 2, side="right"))


def border_color(img: Image.Image, trim: layout.TrimRect) -> str:
    """Border colour of the card: black, white, silver or gold; `ambiguous` when the band is not one uniform colour
    (which a borderless printing shows, but so do a busy scanner bed and damage: it is no claim either way)."""
    pixels = _band_pixels(img, trim)
    if pixels.size == 0:
        return AMBIGUOUS_BORDER
    twice = [_twice_median(np.bincount(pixels[:, channel], minlength=256), len(pixels)) for channel in range(3)]
    deviation = np.abs(2 * pixels - np.array(twice)).sum(axis=1)  # twice each pixel's distance from the median
    spread = _twice_median(np.bincount(deviation), len(pixels)) / 4
    r, g, b = (value / 2 for value in twice)
    luma = 0.299 * r + 0.587 * g + 0.114 * b
    chroma = max(r, g, b) - min(r, g, b)
    if spread > 60:
        return AMBIGUOUS_BORDER
    if chroma > 40 and r > b and g > b:
        return "gold"
    if chroma > 60:
        return AMBIGUOUS_BORDER
    if luma < 70:
        return "black"
    if luma > 200:
        return "white"
    return "silver"


def blur_variance(gray: Image.Image) -> float:
    """Variance of the Laplacian of a grayscale image: low means blurred."""
    arr = np.asarray(gray, dtype=np.float32)
    if arr.shape[0] < 3 or arr.shape[1] < 3:
        return 0.0
    lap = cv2.Laplacian(arr, cv2.CV_32F, ksize=1)[1:-1, 1:-1]  # the four neighbours less four times the centre
    _, deviation = cv2.meanStdDev(lap)  # one pass, in double precision
    return round(float(deviation[0, 0]) ** 2, 3)


def quality_of(img: Image.Image, long_side: int = 800) -> tuple[float, float]:
    """(blur variance, entropy) of a scan, measured on a copy scaled to `long_side` so sizes compare."""
    gray = img.convert("L")
    scale = long_side / max(gray.size)
    if scale < 1:
        gray = gray.resize((max(1, round(gray.width * scale)), max(1, round(gray.height * scale))), Image.BOX)
    return blur_variance(gray), round(float(gray.entropy()), 4)
