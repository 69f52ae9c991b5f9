"""Image preparation for OCR: polarity, thresholds, text-line finding, text-height normalisation, deskew, denoise.

Tesseract reads best with dark text on a light background at a cap height of about 30 px, cropped to the text
(less image is less work) with a white margin. `text_image` turns a crop into dark text on white whatever its
colours, dropping what touches the crop's edge (the card frame, the scanner bed); `find_lines` locates the text
lines from the row profile of the ink, so `text_crop` can cut the crop to them and scale it so the first line has
`TARGET_LINE_HEIGHT`, whatever the scan's resolution or the font's size. The heavier steps (deconvolution, median,
unsharp mask, deskew) are for the escalation path only.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
from PIL import Image, ImageFilter, ImageOps
from scipy import ndimage

# Height in pixels of a collector line's ink (cap height plus the slash's overhang) after normalisation.
TARGET_LINE_HEIGHT = 34
# Never enlarge more than this (beyond it there is nothing left to read) or below this width.
MAX_UPSCALE = 4.0
_MIN_WIDTH = 16
# Tesseract's limits are far above this; a wider crop only comes from images that are not card-shaped.
MAX_WIDTH = 4000
PAD = 12
# The blur the deconvolution step undoes (Gaussian sigma, pixels of the scan) and how many iterations it takes:
# the middle of the 0.8-1.4 px that phone photos and small exports show, enough to pull strokes apart and too few
# to ring.
DEBLUR_SIGMA = 1.1
DEBLUR_ITERATIONS = 5


@dataclass(frozen=True)
class Line:
    """A horizontal band of text: rows [top, bottom) and the ink's columns [left, right)."""

    top: int
    bottom: int
    left: int
    right: int

    @property
    def height(self) -> int:
        return self.bottom - self.top


def otsu(gray: Image.Image) -> int:
    """Otsu's threshold of a greyscale image."""
    return otsu_of(np.asarray(gray.histogram()[:256], dtype=np.float64))


def otsu_of(hist: np.ndarray) -> int:
    """Otsu's threshold of a 256-bin histogram."""
    total = hist.sum()
    if total == 0:
        return 128
    levels = np.arange(256, dtype=np.float64)
    weight_bg = np.cumsum(hist)
    sum_bg = np.cumsum(hist * levels)
    weight_fg = total - weight_bg
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_bg = sum_bg / weight_bg
        mean_fg = (sum_bg[-1] - sum_bg) / weight_fg
        between = weight_bg * weight_fg * (mean_bg - mean_fg) ** 2
    between = np.nan_to_num(between, nan=-1.0, posinf=-1.0)
    return int(np.argmax(between))


def binarise(gray: Image.Image, offset: int = 0) -> Image.Image:
    """Black and white (mode L) at Otsu's threshold plus `offset`."""
    level = otsu(gray) + offset
    return gray.point(lambda v: 255 if v > level else 0)


def sharpened(gray: Image.Image) -> Image.Image:
    """Median-filtered (noise, JPEG ringing) then unsharp-masked (blur) greyscale."""
    return gray.filter(ImageFilter.MedianFilter(3)).filter(ImageFilter.UnsharpMask(radius=2, percent=160, threshold=2))


def pad(img: Image.Image) -> Image.Image:
    """`img` with a white margin, which Tesseract needs to find text touching the edge."""
    return ImageOps.expand(img, border=PAD, fill=255)


def resized(gray: Image.Image, factor: float) -> Image.Image:
    """`gray` scaled by `factor` (LANCZOS), at least `_MIN_WIDTH` wide and at most `MAX_WIDTH`."""
    width = min(MAX_WIDTH, max(_MIN_WIDTH, round(gray.width * factor)))
    height = max(8, round(gray.height * width / max(1, gray.width)))
    return gray.resize((width, height), Image.LANCZOS)


def _runs(mask: np.ndarray, merge_gap: int) -> list[tuple[int, int]]:
    """[start, end) runs of True in a 1-D mask, joining runs separated by at most `merge_gap` False entries."""
    padded = np.concatenate(([False], mask, [False]))
    edges = np.flatnonzero(padded[1:] != padded[:-1])
    runs: list[tuple[int, int]] = []
    for start, end in zip(edges[::2].tolist(), edges[1::2].tolist(), strict=True):
        if runs and start - runs[-1][1] <= merge_gap:
            runs[-1] = (runs[-1][0], end)
        else:
            runs.append((start, end))
    return runs


def background_level(gray: np.ndarray) -> int:
    """The dominant grey level (histogram mode over 8-level bins, refined by the median inside the bin)."""
    bins = np.bincount((gray // 8).ravel(), minlength=32)
    top = int(np.argmax(bins))
    return int(np.median(gray[(gray // 8) == top]))


def edge_blobs(mask: np.ndarray) -> np.ndarray:
    """The connected regions of `mask` that touch the image's edge."""
    count, labels = cv2.connectedComponents(mask.astype(np.uint8), connectivity=4)
    if count <= 1:
        return np.zeros_like(mask)
    touching = np.zeros(count, dtype=bool)
    for edge in (labels[0, :], labels[-1, :], labels[:, 0], labels[:, -1]):
        touching[edge] = True
    touching[0] = False  # the background
    return touching[labels]


@dataclass(frozen=True)
class TextImage:
    """A crop as dark text on white, whatever its polarity, with what touches its edge (frame, card edge,
    scanner bed) whited out, and the mask of its ink."""

    image: Image.Image
    ink: np.ndarray


def text_image(gray: Image.Image, min_contrast: int = 40, background_rows: float = 0.0,
               local: int = 0) -> TextImage:
    """Measure every pixel by its distance from the background level (so light-on-dark and dark-on-light text read
    alike), drop regions touching the edge, and scale so the text's core is black. `background_rows`: the share of
    rows at the top left out when the background level is measured (a card's frame above its bottom border).
    `local` (an odd number of pixels): the background is each pixel's neighbourhood median over that span instead
    of one level, for text over art whose light changes across the band."""
    arr = np.asarray(gray, dtype=np.int16)
    if arr.size == 0:
        return TextImage(gray, np.zeros(arr.shape, dtype=bool))
    first = min(arr.shape[0] - 1, round(background_rows * arr.shape[0]))
    if local:
        background = cv2.medianBlur(np.asarray(gray, dtype=np.uint8), local).astype(np.int16)
    else:
        background = np.int16(background_level(arr[first:].astype(np.uint8)))
    dist = np.abs(arr - background).astype(np.uint8)
    framed = edge_blobs(dist > min_contrast)
    level = max(min_contrast, otsu_of(np.bincount(dist[~framed].ravel(), minlength=256).astype(np.float64)))
    ink = (dist > level) & ~framed
    strength = float(np.percentile(dist[ink], 75)) if ink.any() else 255.0
    out = 255.0 - dist.astype(np.float32) * (255.0 / max(strength, float(min_contrast)))
    out[framed] = 255.0
    return TextImage(Image.fromarray(np.clip(out, 0, 255).astype(np.uint8), "L"), ink)


def find_lines(ink: np.ndarray, min_height: int = 3, edge: int = 0) -> list[Line]:
    """Text lines of an ink mask, top to bottom.

    A row belongs to a line when at least 1.5% of it is ink. Bands that are mostly solid (a rule) or cut by the
    top or bottom edge are not text, nor is a band starting within `edge` rows of the top (what is left of a
    frame above the text).
    """
    if ink.size == 0:
        return []
    height, width = ink.shape
    per_row = ink.sum(axis=1)
    lines: list[Line] = []
    for top, bottom in _runs(per_row > max(1.0, 0.015 * width), merge_gap=1):
        if bottom - top < min_height or top <= edge or bottom == height:
            continue
        band = ink[top:bottom]
        if float(np.median(band.sum(axis=1))) > 0.6 * width:  # a solid rule, not glyphs
            continue
        columns = np.flatnonzero(band.any(axis=0))
        lines.append(Line(top, bottom, int(columns[0]), int(columns[-1]) + 1))
    return lines


def text_lines(ink: np.ndarray, expected: tuple[float, float], edge: int = 0, share: float = 0.0) -> list[Line]:
    """The text lines of an ink mask whose height lies in `expected` (pixels, min and max) and is at least `share`
    of the tallest such line's (one block of text shares one type size: a much thinner band is a remnant of a
    frame or a row of specks); `edge` as in `find_lines`."""
    low, high = expected
    lines = [line for line in find_lines(ink, edge=edge) if low <= line.height <= high]
    tallest = max((line.height for line in lines), default=0)
    return [line for line in lines if line.height >= share * tallest]


def text_crop(gray: Image.Image, lines: list[Line], target: float = TARGET_LINE_HEIGHT) -> Image.Image:
    """`gray` cut to `lines` (with a margin) and scaled so the first line is `target` pixels high."""
    first, last = lines[0], lines[-1]
    margin = max(2, round(first.height * 0.45))
    left = max(0, min(line.left for line in lines) - margin)
    right = min(gray.width, max(line.right for line in lines) + margin)
    box = (left, max(0, first.top - margin), right, min(gray.height, last.bottom + margin))
    factor = min(MAX_UPSCALE, target / max(1, first.height))
    return resized(_margin_cleared(gray.crop(box), lines, box, first.height), factor)


HALO = 0.15
"""Rows, in line heights, kept above and below the lines' ink when the margin is cleared (a blurred glyph's
faint edge)."""


def _margin_cleared(crop: Image.Image, lines: list[Line], box: tuple[int, int, int, int], height: int) -> Image.Image:
    """`crop` with its rows above the first line and below the last (beyond a `HALO`) turned white: what is left
    there of a frame or a speck is no text, and a row of specks over the first line makes Tesseract's block read
    drop that line. Columns are kept: a line's faint ends (a star's rays, a suffix) may lie outside its ink."""
    halo = max(1, round(HALO * height))
    top = box[1]
    arr = np.asarray(crop, dtype=np.uint8).copy()
    arr[:max(0, lines[0].top - halo - top)] = 255
    arr[max(0, lines[-1].bottom + halo - top):] = 255
    return Image.fromarray(arr, "L")


def deblurred(gray: Image.Image, sigma: float = DEBLUR_SIGMA, iterations: int = DEBLUR_ITERATIONS) -> Image.Image:
    """`gray` (dark text on white) with a Gaussian blur of `sigma` pixels undone by Richardson-Lucy deconvolution.

    Blur spreads each stroke of small type into its neighbours until they touch, which no threshold or sharpening
    of the upscaled crop separates again; a few iterations at the scan's own resolution pull the ink back into
    the strokes. The text does not move, so the crop's lines stay where they were found."""
    ink = 256.0 - np.asarray(gray, dtype=np.float64)  # ink as the signal, never zero
    estimate = ink.copy()
    for _ in range(iterations):
        blurred = ndimage.gaussian_filter(estimate, sigma)
        estimate *= ndimage.gaussian_filter(ink / np.maximum(blurred, 1e-6), sigma)
    return Image.fromarray(np.clip(256.0 - estimate, 0, 255).astype(np.uint8), "L")


def skew_angle(gray: Image.Image, max_degrees: float = 2.5, step: float = 0.5) -> float:
    """The angle (within +-`max_degrees`, degrees counter-clockwise) that makes the text rows of `gray` (dark text
    on white) sharpest: the variance of its row profile is highest when the rows are level."""
    binary = binarise(gray)
    small = binary if binary.width <= 400 else resized(binary, 400 / binary.width)
    best_angle, best_score = 0.0, -1.0
    for k in range(-int(max_degrees / step), int(max_degrees / step) + 1):
        angle = k * step
        turned = small.rotate(angle, resample=Image.NEAREST, fillcolor=255) if angle else small
        profile = (np.asarray(turned, dtype=np.uint8) < 128).sum(axis=1).astype(np.float64)
        score = float(np.var(profile))
        if score > best_score:
            best_angle, best_score = angle, score
    return best_angle


def deskewed(gray: Image.Image, max_degrees: float = 2.5, step: float = 0.5) -> Image.Image:
    """`gray` (dark text on white) rotated by its `skew_angle`."""
    angle = skew_angle(gray, max_degrees, step)
    if angle == 0.0:
        return gray
    return gray.rotate(angle, resample=Image.BICUBIC, fillcolor=255, expand=False)
