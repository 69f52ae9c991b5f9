"""Collector-line and legal-line OCR: find the text, read it once, and read again only when that is not enough.

The first read is cheap: the crop is cut to its text lines, scaled to Tesseract's preferred text height and
binarised. It is enough when the catalogue confirms it (`read_catalog.resolve`). Otherwise the reader escalates
through heavier variants (the crop's blur deconvolved, greyscale, deskew, denoise and sharpen, a larger scale; on
the escalation engine where one is given) until a reading is confirmed or two plausible readings agree. Small,
blurred or unconfirmed scans pay for the extra reads; the common case does not.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, replace

import numpy as np
from PIL import Image, ImageOps

from stage_e_dagster.domain.evidence import preprocess as pp
from stage_e_dagster.domain.evidence.ocr import OcrEngine
from stage_e_dagster.domain.evidence.parse import CollectorParse, parse_collector
from stage_e_dagster.domain.evidence.read_catalog import ReadCatalog, resolve

# A collector line's ink is expected to be this share of the collector crop's height (two lines can merge when
# the scan is rotated, hence the generous top).
LINE_SHARE = (0.06, 0.5)
# A band starting this close to the crop's top (share of its height) is what is left of the frame above the
# bottom border: the collector block starts lower. A band under this share of the tallest line's height is no line
# of the block (its lines share one type size).
TOP_EDGE = 0.04
TYPE_SHARE = 0.6
# Scale of the whole crop's height when no text line is found.
FALLBACK_CROP_HEIGHT = 150
LEGAL_CROP_HEIGHT = 120
LARGE_LINE_HEIGHT = 44
# Reads after which the ladder stops when none of them held a digit: every collector line prints its number.
DIGITLESS_STOP = 3


@dataclass(frozen=True)
class CollectorReading:
    """The outcome of reading a collector line: raw OCR text, its parse, the number and set code it stands for.

    `confirmed`: the catalogue holds this printing of the card's name; `settled`: and the set code or the set's
    known printed total was read with it. `accepted`: confirmed, or plausible and agreed by another read, or
    plausible on the only evidence there is.
    """

    raw: str
    parse: CollectorParse
    set_code_raw: str | None
    set_code: str | None  # snapped (lower case), else the raw token lower-cased
    snapped: bool
    accepted: bool
    attempts: int
    number: str | None = None
    confirmed: bool = False
    settled: bool = False


@dataclass
class Prepared:
    """A collector crop made ready once for every variant: dark text on light, its text lines found."""

    gray: Image.Image
    lines: list[pp.Line]
    _deskewed: Prepared | None = None
    _deblurred: Prepared | None = None

    @classmethod
    def of(cls, crop: Image.Image) -> Prepared:
        text = pp.text_image(ImageOps.autocontrast(crop.convert("L"), cutoff=1))
        return cls(text.image, _lines(text.ink, text.image.height))

    def deblurred(self) -> Prepared:
        """The crop with its blur undone; its lines stay where they were found."""
        if self._deblurred is None:
            self._deblurred = Prepared(pp.deblurred(self.gray), self.lines)
        return self._deblurred

    def deskewed(self) -> Prepared:
        if self._deskewed is None:
            turned = pp.deskewed(self.gray)
            if turned is self.gray:
                self._deskewed = self
            else:
                ink = np.asarray(turned, dtype=np.uint8) < pp.otsu(turned)
                self._deskewed = Prepared(turned, _lines(ink, turned.height))
        return self._deskewed

    def text(self, target: float = pp.TARGET_LINE_HEIGHT) -> Image.Image:
        """The crop cut to its (first two) text lines and scaled to `target`, or all of it when none is found."""
        if not self.lines:
            return pp.resized(self.gray, FALLBACK_CROP_HEIGHT / max(1, self.gray.height))
        return pp.text_crop(self.gray, self.lines[:2], target)


def _lines(ink: np.ndarray, height: int) -> list[pp.Line]:
    low, high = LINE_SHARE
    return pp.text_lines(ink, (low * height, high * height), edge=round(TOP_EDGE * height), share=TYPE_SHARE)


@dataclass(frozen=True)
class Step:
    """One read of the ladder: a named variant of the prepared crop, on the first or the escalation engine."""

    name: str
    escalate: bool
    image: Callable[[Prepared], Image.Image]


LADDER: tuple[Step, ...] = (
    Step("binary", False, lambda p: pp.pad(pp.binarise(p.text()))),
    Step("deblurred-grey", False, lambda p: pp.pad(p.deblurred().text())),
    Step("grey", True, lambda p: pp.pad(p.text())),
    Step("deskewed", False, lambda p: pp.pad(pp.binarise(p.deskewed().text()))),
    Step("sharpened", True, lambda p: pp.pad(pp.binarise(pp.sharpened(p.text())))),
    Step("large", False, lambda p: pp.pad(pp.binarise(p.text(LARGE_LINE_HEIGHT)))),
    Step("deskewed-grey", False, lambda p: pp.pad(p.deskewed().text())),
    Step("deskewed-sharpened", True, lambda p: pp.pad(pp.binarise(pp.sharpened(p.deskewed().text())))),
)
"""Variants in the order they are tried; neighbours differ so that their errors do not."""


def _plausible(parse: CollectorParse, number: str | None) -> bool:
    """Whether a number fits its printed total (star promos and letter variants are exempt)."""
    if number is None:
        return False
    if parse.total is None or not number.isdigit():
        return True
    return int(number) <= max(parse.total, 20) * 1.5


def read_text(raw: str, known: Collection[str], attempts: int, catalog: ReadCatalog | None = None,
              name: str | None = None) -> CollectorReading:
    """A reading of OCR text: parsed, resolved against the catalogue and judged."""
    parse = parse_collector(raw)
    found = resolve(parse, known, catalog, name)
    snapped = found.set_code is not None
    set_code = found.set_code if snapped else (found.set_code_raw.lower() if found.set_code_raw else None)
    needs_code = bool(known) and bool(parse.set_tokens)
    accepted = found.confirmed or (_plausible(parse, found.number) and (snapped or not needs_code))
    return CollectorReading(raw, parse, found.set_code_raw, set_code, snapped, accepted, attempts, found.number,
                            found.confirmed, found.settled)


def _score(reading: CollectorReading) -> int:
    return (
        (8 if reading.accepted else 0)
        + (4 if reading.number else 0)
        + (2 if reading.snapped else 0)
        + (1 if reading.parse.total else 0)
    )


def read_collector(
    crop: Image.Image,
    known_set_codes: Collection[str],
    engine: OcrEngine,
    votes_needed: int = 2,
    max_attempts: int | None = None,
    *,
    catalog: ReadCatalog | None = None,
    name: str | None = None,
    escalation: OcrEngine | None = None,
) -> CollectorReading:
    """Read the collector line in `crop`: ladder steps in turn until one reading is confirmed by the catalogue
    (given `catalog` and the card's `name`) or `votes_needed` accepted readings agree.

    Agreement between differently preprocessed readings catches the confident single-digit misreads (5 -> 6)
    that a parse alone cannot. With neither, the accepted reading with most votes (then the best-scored reading)
    wins and is marked accepted only if it was.
    """
    known = catalog.set_codes if catalog is not None else known_set_codes
    prepared = Prepared.of(crop)
    steps = LADDER[:max_attempts] if max_attempts else LADDER
    readings: list[CollectorReading] = []
    votes: dict[tuple[str | None, str | None], int] = {}
    for attempt, step in enumerate(steps, 1):
        reader = escalation if step.escalate and escalation is not None else engine
        reading = read_text(reader.read(step.image(prepared), psm=6), known, attempt, catalog, name)
        if reading.confirmed:
            return reading
        readings.append(reading)
        if attempt >= DIGITLESS_STOP and not any(ch.isdigit() for r in readings for ch in r.raw):
            break  # no read has seen a digit: a card back, a card printed without a number, a blank crop
        if reading.accepted:
            key = (reading.number, reading.set_code)
            votes[key] = votes.get(key, 0) + 1
            if votes[key] >= votes_needed:
                return reading
    best = max(readings, key=lambda r: (votes.get((r.number, r.set_code), 0) if r.accepted else 0, _score(r)))
    return replace(best, attempts=len(readings))


def read_legal(crop: Image.Image, engine: OcrEngine, accept: Callable[[str], bool]) -> str:
    """OCR text of the legal line: its bottom text band first, the whole crop if `accept` refuses that."""
    text = pp.text_image(ImageOps.autocontrast(crop.convert("L"), cutoff=1))
    lines = pp.find_lines(text.ink)
    factor = LEGAL_CROP_HEIGHT / max(1, crop.height)
    if lines:
        last = lines[-1]
        margin = max(2, last.height // 3)
        band = text.image.crop((0, max(0, last.top - margin), crop.width, min(crop.height, last.bottom + margin)))
        read = engine.read(pp.pad(pp.binarise(pp.resized(band, factor))), psm=6)
        if accept(read) or len(lines) == 1:
            return read
    return engine.read(pp.pad(pp.binarise(pp.resized(text.image, factor))), psm=6)
