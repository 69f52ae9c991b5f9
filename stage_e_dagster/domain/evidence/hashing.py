"""Perceptual hashes of card regions as signed 64-bit integers (how Postgres BIGINT stores them).

`symbol_phash` is the canonical set-symbol hash: the reference symbol import and the Stage C extractor both call it,
so a reference PNG and the same glyph cropped from a scan land within a few bits of each other.
"""

from __future__ import annotations

import cv2
import imagehash
import numpy as np
from PIL import Image, ImageFilter, ImageOps
from scipy import fft, ndimage

from stage_e_dagster.domain.bits import hamming, to_signed64, to_unsigned64
from stage_e_dagster.domain.evidence.preprocess import background_level, edge_blobs

__all__ = ["hamming", "hash_to_int", "phash64", "symbol_phash", "to_signed64", "to_unsigned64"]

# A pixel belongs to the glyph when its grey level differs from the background by more than this.
_GLYPH_DELTA = 48
# Edge-touching regions are dropped as frame when the interior regions span this share of the shorter side.
_MIN_INTERIOR_EXTENT = 0.25
_WORK_SIDE = 128
# The glyph is hashed at no more than this many pixels across, about its size on a 1040 px scan.
_GLYPH_SIDE = 40
# Symbol-hash bits whose DCT term lies within this share of the DC term above the median read as 0.
_TIE_MARGIN = 0.01


def hash_to_int(h: imagehash.ImageHash) -> int:
    """An 8x8 `ImageHash` as a signed 64-bit integer (row-major, first bit most significant)."""
    value = 0
    for bit in h.hash.flatten():
        value = (value << 1) | int(bool(bit))
    return to_signed64(value)


def phash64(img: Image.Image) -> int:
    """The 64-bit DCT perceptual hash of an image, as a signed integer."""
    return hash_to_int(imagehash.phash(_opaque_rgb(img).convert("L"), hash_size=8))


def _opaque_rgb(img: Image.Image) -> Image.Image:
    """`img` as RGB, transparent areas composited onto white."""
    if img.mode in ("RGBA", "LA") or (img.mode == "P" and "transparency" in img.info):
        rgba = img.convert("RGBA")
        canvas = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        canvas.alpha_composite(rgba)
        return canvas.convert("RGB")
    return img.convert("RGB")


def _extent(mask: np.ndarray) -> int:
    """The larger side of the bounding box of a boolean mask (0 when empty)."""
    if not mask.any():
        return 0
    rows = np.flatnonzero(mask.any(axis=1))
    cols = np.flatnonzero(mask.any(axis=0))
    return int(max(rows[-1] - rows[0] + 1, cols[-1] - cols[0] + 1))


def _glyph_mask(gray: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Soft glyph intensity (0..255, polarity-free) and the boolean mask of the glyph's regions."""
    bg = background_level(gray)
    dist = np.abs(gray.astype(np.int16) - bg)
    mask = dist > _GLYPH_DELTA
    if mask.any():
        interior = mask & ~edge_blobs(mask)
        if _extent(interior) >= _MIN_INTERIOR_EXTENT * min(mask.shape):
            mask = interior
        if mask.any():
            # Drop specks: components under 1% of the largest kept one.
            _, labels, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=4)
            sizes = stats[:, cv2.CC_STAT_AREA].copy()
            sizes[0] = 0  # the background
            mask = (sizes >= 0.01 * sizes[1:].max())[labels] & (labels > 0)
    soft = np.clip(dist * (255.0 / (2 * _GLYPH_DELTA)), 0, 255).astype(np.uint8)
    return soft, mask


def _glyph_pass(gray_img: Image.Image) -> tuple[np.ndarray, np.ndarray]:
    gray = np.asarray(gray_img.filter(ImageFilter.GaussianBlur(0.6)), dtype=np.uint8)
    return _glyph_mask(gray)


def symbol_phash(img: Image.Image) -> int:
    """Canonical hash of a set-symbol glyph on a plain background, as a signed 64-bit integer.

    Grayscale and autocontrast, take the background as the dominant grey level, find the glyph (connected
    regions that differ from the background; regions touching the edge are treated as frame when the interior
    holds the glyph), rescale so the glyph spans at most `_GLYPH_SIDE` pixels (a 128 px reference and a 30 px
    scan glyph then lose the same fine detail), trim to it, pad to a square and hash the polarity-free glyph
    intensity, so a dark glyph on a light plate and a light glyph on a dark plate of the same shape hash alike.
    """
    rgb = _opaque_rgb(img)
    scale = _WORK_SIDE / max(rgb.size)
    if scale < 1:
        size = (max(1, round(rgb.width * scale)), max(1, round(rgb.height * scale)))
        rgb = rgb.resize(size, Image.BILINEAR)
    gray_img = ImageOps.autocontrast(rgb.convert("L"), cutoff=1)
    soft, mask = _glyph_pass(gray_img)
    extent = _extent(mask)
    if extent > _GLYPH_SIDE:
        factor = _GLYPH_SIDE / extent
        size = (max(1, round(gray_img.width * factor)), max(1, round(gray_img.height * factor)))
        soft, mask = _glyph_pass(gray_img.resize(size, Image.BOX))
    if mask.any():
        rows = np.flatnonzero(mask.any(axis=1))
        cols = np.flatnonzero(mask.any(axis=0))
        top, bottom, left, right = rows[0], rows[-1] + 1, cols[0], cols[-1] + 1
        keep = ndimage.binary_dilation(mask, iterations=1)
        soft = np.where(keep, soft, 0).astype(np.uint8)[top:bottom, left:right]
    side = max(soft.shape)
    square = np.zeros((side, side), dtype=np.uint8)
    y0 = (side - soft.shape[0]) // 2
    x0 = (side - soft.shape[1]) // 2
    square[y0 : y0 + soft.shape[0], x0 : x0 + soft.shape[1]] = soft
    return _stable_dct_hash(Image.fromarray(square, mode="L"))


def _stable_dct_hash(gray: Image.Image) -> int:
    """A phash whose near-median coefficients all read 0, so symmetric glyphs (odd terms ~ 0) hash stably."""
    pixels = np.asarray(gray.resize((32, 32), Image.LANCZOS), dtype=np.float64)
    low = fft.dctn(pixels, type=2)[:8, :8].ravel()
    margin = _TIE_MARGIN * abs(low[0])
    value = 0
    for bit in low > np.median(low) + margin:
        value = (value << 1) | int(bit)
    return to_signed64(value)
