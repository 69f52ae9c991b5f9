"""Collector-line and legal-line OCR: crop, preprocess, read, parse, escalate to heavier variants on failure."""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageFilter, ImageOps

from stage_e_dagster.domain.evidence.ocr import OcrEngine
from stage_e_dagster.domain.evidence.parse import CollectorParse, parse_collector, snap_first

# Crops are scaled so their height is this many pixels: a cap height Tesseract reads well (~30 px).
COLLECTOR_CROP_HEIGHT = 150
LEGAL_CROP_HEIGHT = 120
_PAD = 12
# Wider crops only come from images that are not card-shaped; cap them below Tesseract's limits.
_MAX_WIDTH = 4000

Variant = Callable[[Image.Image], Image.Image]


@dataclass(frozen=True)
class CollectorReading:
    """The outcome of reading a collector line: raw OCR text, its parse and the snapped set code."""

    raw: str
    parse: CollectorParse
    set_code_raw: str | None
    set_code: str | None  # snapped (lower case), else the raw token lower-cased
    snapped: bool
    accepted: bool
    attempts: int


def _scaled(gray: Image.Image, height: float, factor: float = 1.0) -> Image.Image:
    target = max(8, round(height * factor))
    width = min(_MAX_WIDTH, max(8, round(gray.width * target / max(1, gray.height))))
    return gray.resize((width, target), Image.LANCZOS)


def _dark_text(gray: Image.Image) -> Image.Image:
    """`gray` with the majority (background) light, so text reads dark on light."""
    histogram = gray.histogram()
    half = sum(histogram) / 2
    running = 0
    median = 0
    for level, count in enumerate(histogram):
        running += count
        if running >= half:
            median = level
            break
    return ImageOps.invert(gray) if median < 128 else gray


def _otsu(gray: Image.Image) -> int:
    histogram = gray.histogram()
    total = sum(histogram)
    sum_all = sum(i * h for i, h in enumerate(histogram))
    weight_bg = 0
    sum_bg = 0.0
    best, threshold = -1.0, 128
    for level in range(256):
        weight_bg += histogram[level]
        if weight_bg == 0:
            continue
        weight_fg = total - weight_bg
        if weight_fg == 0:
            break
        sum_bg += level * histogram[level]
        mean_bg = sum_bg / weight_bg
        mean_fg = (sum_all - sum_bg) / weight_fg
        between = weight_bg * weight_fg * (mean_bg - mean_fg) ** 2
        if between > best:
            best, threshold = between, level
    return threshold


def _binarise(gray: Image.Image, offset: int = 0) -> Image.Image:
    level = _otsu(gray) + offset
    return gray.point(lambda v: 255 if v > level else 0)


def _pad(img: Image.Image) -> Image.Image:
    return ImageOps.expand(img, border=_PAD, fill=255)


def _base(gray: Image.Image, height: float) -> Image.Image:
    return _dark_text(ImageOps.autocontrast(_scaled(gray, height), cutoff=1))


def collector_variants(height: int = COLLECTOR_CROP_HEIGHT) -> list[Variant]:
    """Preprocessing variants, cheapest first: binarised at two scales, greyscale, then heavier ones (denoise,
    sharpen, other thresholds and scales, the opposite polarity). Neighbours differ so their errors do not."""
    return [
        lambda g: _pad(_binarise(_base(g, height))),
        lambda g: _pad(_binarise(_base(g, height * 0.8))),
        lambda g: _pad(_base(g, height * 0.96)),
        lambda g: _pad(_binarise(_base(g.filter(ImageFilter.MedianFilter(3)), height * 1.12), offset=-20)),
        lambda g: _pad(_binarise(_base(g, height * 0.8).filter(ImageFilter.SHARPEN), offset=15)),
        lambda g: _pad(_base(g, height * 1.2)),
        lambda g: _pad(ImageOps.invert(_binarise(_base(g, height)))),
    ]


def _plausible(parse: CollectorParse) -> bool:
    """Whether a parsed number fits its printed total (star promos and letter variants are exempt)."""
    if parse.number is None:
        return False
    if parse.total is None or not parse.number.isdigit():
        return True
    return int(parse.number) <= max(parse.total, 20) * 1.5


def _reading(raw: str, known: Collection[str], attempts: int) -> CollectorReading:
    parse = parse_collector(raw)
    token, snapped = snap_first(parse.set_tokens, known)
    if snapped is not None:
        set_code: str | None = snapped
    else:
        set_code = token.lower() if token else None
    needs_code = bool(known) and parse.has_second_line
    accepted = _plausible(parse) and (snapped is not None or not needs_code)
    return CollectorReading(raw, parse, token, set_code, snapped is not None, accepted, attempts)


def _key(reading: CollectorReading) -> tuple[str | None, str | None]:
    return reading.parse.number, reading.set_code


def _score(reading: CollectorReading) -> int:
    return (
        (8 if reading.accepted else 0)
        + (4 if reading.parse.number else 0)
        + (2 if reading.snapped else 0)
        + (1 if reading.parse.total else 0)
    )


def read_collector(
    crop: Image.Image,
    known_set_codes: Collection[str],
    engine: OcrEngine,
    votes_needed: int = 2,
    max_attempts: int | None = None,
) -> CollectorReading:
    """Read the collector line in `crop`: variants in turn until `votes_needed` accepted readings agree.

    Agreement between differently preprocessed readings catches the confident single-digit misreads (5 -> 6)
    that a parse alone cannot. With no agreement, the accepted reading with most votes (then the best-scored
    reading) wins and is marked accepted only if it was.
    """
    gray = crop.convert("L")
    variants = collector_variants()[:max_attempts] if max_attempts else collector_variants()
    readings: list[CollectorReading] = []
    votes: dict[tuple[str | None, str | None], int] = {}
    for attempt, variant in enumerate(variants, 1):
        reading = _reading(engine.read(variant(gray), psm=6), known_set_codes, attempt)
        readings.append(reading)
        if reading.accepted:
            key = _key(reading)
            votes[key] = votes.get(key, 0) + 1
            if votes[key] >= votes_needed:
                return _with_attempts(reading, attempt)
    best = max(readings, key=lambda r: (votes.get(_key(r), 0) if r.accepted else 0, _score(r)))
    return _with_attempts(best, len(readings))


def _with_attempts(reading: CollectorReading, attempts: int) -> CollectorReading:
    return CollectorReading(
        reading.raw, reading.parse, reading.set_code_raw, reading.set_code, reading.snapped, reading.accepted,
        attempts,
    )


def text_bands(binary: Image.Image, min_height: int = 6) -> list[tuple[int, int]]:
    """Row ranges (top, bottom) holding dark text in a dark-on-light binary image, top to bottom."""
    width = binary.width
    rows = np.asarray(binary, dtype=np.uint8) < 128
    ink = rows.sum(axis=1)
    inked = ink > max(1, width // 200)
    bands: list[tuple[int, int]] = []
    start = None
    for y, on in enumerate(inked.tolist() + [False]):
        if on and start is None:
            start = y
        elif not on and start is not None:
            if bands and start - bands[-1][1] <= 2:
                bands[-1] = (bands[-1][0], y)
            else:
                bands.append((start, y))
            start = None
    return [band for band in bands if band[1] - band[0] >= min_height]


def read_legal(crop: Image.Image, engine: OcrEngine, accept: Callable[[str], bool]) -> str:
    """OCR text of the legal line: the bottom text band of `crop` first, the whole crop if `accept` refuses it."""
    binary = _binarise(_base(crop.convert("L"), LEGAL_CROP_HEIGHT))
    bands = text_bands(binary)
    if len(bands) >= 2:
        top, bottom = bands[-1]
        margin = max(3, (bottom - top) // 3)
        line = binary.crop((0, max(0, top - margin), binary.width, min(binary.height, bottom + margin)))
        text = engine.read(_pad(line), psm=6)
        if accept(text):
            return text
    return engine.read(_pad(binary), psm=6)
