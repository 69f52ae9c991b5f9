"""Stage C entry point: scan bytes in, `Evidence` (or a named `EvidenceSkip`) out, per-extractor versions.

Every image first goes to the card finder (`card_finder.find_card`): a scan that already is the card passes for
the cost of an aspect test; a photo's card is cut out and straightened, and every extractor reads that card as it
reads a scan; a photo with no single whole card in it is a named skip (`card_finder.SKIP_REASONS`), never a guess.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterator, MutableMapping
from concurrent.futures import Executor
from contextlib import contextmanager
from dataclasses import replace
from datetime import date
from typing import Any

from PIL import Image

from stage_e_dagster.domain import layout
from stage_e_dagster.domain.evidence.band import Block, BottomBand
from stage_e_dagster.domain.evidence.card_finder import PHOTO, CardNotFound, FoundCard, find_card, warp_card
from stage_e_dagster.domain.evidence.collector import CollectorReading, read_collector
from stage_e_dagster.domain.evidence.collector_views import recogniser_line, tight_view
from stage_e_dagster.domain.evidence.fragments import letter_twins, star_twins
from stage_e_dagster.domain.evidence.geometry import (
    border_color,
    classify_bleed,
    crop_region,
    quality_of,
    trim_of,
)
from stage_e_dagster.domain.evidence.hashing import phash64, symbol_phash
from stage_e_dagster.domain.evidence.legal_read import read_legal
from stage_e_dagster.domain.evidence.legal_text import credit_only, has_proxy_marker, parse_copyright_year
from stage_e_dagster.domain.evidence.line_verify import star_seen
from stage_e_dagster.domain.evidence.load import LoadedScan, load_scan
from stage_e_dagster.domain.evidence.model import Evidence, EvidenceSkip, flat_corners
from stage_e_dagster.domain.evidence.ocr import OcrEngine
from stage_e_dagster.domain.evidence.parse import normalise_collector_number
from stage_e_dagster.domain.evidence.photo_light import flatten_light
from stage_e_dagster.domain.evidence.read_catalog import ReadCatalog
from stage_e_dagster.domain.evidence.star_mark import end_height, star_before_slash
from stage_e_dagster.domain.evidence.versions import EXTRACTOR_VERSIONS, EXTRACTORS, stale_extractors  # noqa: F401 - re-exported
from stage_e_dagster.domain.printed_lines import CENTRED, LEGAL_NUMBER

# Geometry, hashes and quality look at the scan reduced to about this long side: they need no more, and a
# quarter of the pixels is a quarter of the work. Only the OCR crops come from the full image.
ANALYSIS_LONG_SIDE = 800
COLLECTOR_FIELDS = ("collector_raw", "collector_number", "set_code_raw", "set_code", "collector_total",
                    "collector_layout", "collector_star", "collector_end_height", "language")
"""The fields the collector reader fills (`_extract_card`)."""
# A photo's card whose way up the finder was this unsure of (`FoundCard.orientation_margin`), and whose collector
# number did not read, is read once more turned half a turn.
UNSURE_ORIENTATION = 0.3


def extract_evidence(
    data: bytes,
    *,
    known_set_codes: Collection[str],
    engine: OcrEngine,
    only: Collection[str] | None = None,
    today: date | None = None,
    catalog: ReadCatalog | None = None,
    name: str | None = None,
    escalation: OcrEngine | None = None,
    rescue: OcrEngine | None = None,
    timings: MutableMapping[str, float] | None = None,
    executor: Executor | None = None,
) -> Evidence | EvidenceSkip:
    """Evidence from scan bytes; `only` restricts to the named extractors (the caller merges stored fields).

    With `catalog` and the card's `name` (from its file name), one collector reading the catalogue confirms is
    enough and the legal line is not read when nothing needs it; without them the reader wants two readings that
    agree. `escalation` is the OCR engine for the reader's escalation steps (default: `engine`); `rescue`, a
    second engine for the number Tesseract could not read (`collector.read_collector`; confirmed readings only).
    `timings`, when given, accumulates seconds per extractor ("decode" for loading). `executor`, when given, runs
    the pixel analysis (geometry, hashes, quality) while this thread reads the text lines (see
    `extract_from_loaded`).

    `extractor_versions` holds the versions of the extractors computed here. Never raises on bad bytes: they
    become an `EvidenceSkip`. Raises ValueError for an unknown extractor name in `only`.
    """
    selected = set(EXTRACTORS if only is None else only)
    unknown = selected - set(EXTRACTORS)
    if unknown:
        raise ValueError(f"unknown extractors {sorted(unknown)}; known: {', '.join(EXTRACTORS)}")
    with _timed(timings, "decode"):
        loaded = load_scan(data)
    if isinstance(loaded, EvidenceSkip):
        return loaded
    return extract_from_loaded(
        loaded, known_set_codes=known_set_codes, engine=engine, selected=selected, today=today, catalog=catalog,
        name=name, escalation=escalation, rescue=rescue, timings=timings, executor=executor, data=data,
    )


def _at_full_size(found: FoundCard, loaded: LoadedScan, data: bytes) -> tuple[FoundCard, LoadedScan]:
    """The photo's card cut at its corners out of a decode of `data` at the file's own size (the corners are
    normalised, so they hold at any size), with that decode; as found when the bytes no longer decode."""
    whole = load_scan(data, full=True)
    if isinstance(whole, EvidenceSkip):
        return found, loaded
    return replace(found, image=warp_card(whole.image, found.corners)), whole


@contextmanager
def _timed(timings: MutableMapping[str, float] | None, key: str) -> Iterator[None]:
    if timings is None:
        yield
        return
    started = time.perf_counter()
    try:
        yield
    finally:
        timings[key] = timings.get(key, 0.0) + time.perf_counter() - started


def extract_from_loaded(
    loaded: LoadedScan,
    *,
    known_set_codes: Collection[str],
    engine: OcrEngine,
    selected: Collection[str],
    today: date | None = None,
    catalog: ReadCatalog | None = None,
    name: str | None = None,
    escalation: OcrEngine | None = None,
    rescue: OcrEngine | None = None,
    timings: MutableMapping[str, float] | None = None,
    executor: Executor | None = None,
    data: bytes | None = None,
) -> Evidence | EvidenceSkip:
    """Find the card in a decoded image, then run the selected extractors over it (see `extract_evidence`).

    With the file's bytes (`data`), a photo decoded smaller than the file has its card cut out of a decode at the
    file's own size (`_at_full_size`): the finder needs no more than the working size, the collector line does.

    A photo with no single whole card in it is the finder's named skip. Otherwise the extractors read the card
    alone (`FoundCard.loaded`: the image itself for a scan). Where the finder's `card` version is stale on a photo,
    every extractor runs: each read the card the finder cut out. A photo's card whose way up was unsure and whose
    collector number did not read is read once more the other way up, and kept that way when the number reads.
    Before that, a photo's card whose number did not read has its collector line read again from the card with
    its light flattened (`photo_light.flatten_light`: a lamp off to one side, a line half in shadow); only the
    collector's fields are taken from that read.
    `card_corners` is written when `card` is selected."""
    with _timed(timings, "card"):
        found = find_card(loaded.image)
    if isinstance(found, CardNotFound):
        return found.as_skip()
    if found.kind == PHOTO and data is not None and loaded.scale < 1.0:
        with _timed(timings, "card"):
            found, loaded = _at_full_size(found, loaded, data)
    selected = set(selected)
    if found.kind == PHOTO and "card" in selected:
        selected = set(EXTRACTORS)

    def read(card: FoundCard, only: Collection[str] = selected) -> Evidence:
        evidence = _extract_card(card.loaded(loaded), known_set_codes=known_set_codes, engine=engine,
                                 selected=only, today=today, catalog=catalog, name=name, escalation=escalation,
                                 rescue=rescue, timings=timings, executor=executor)
        if "card" in selected:
            evidence.card_corners = flat_corners(card.corners)
        return evidence

    evidence = read(found)
    if found.kind == PHOTO and "collector" in selected and evidence.collector_number is None:
        lit = read(replace(found, image=flatten_light(found.image)), only={"collector"})
        if lit.collector_number is not None:  # the collector line read once the light falling on it is divided out
            for field_name in COLLECTOR_FIELDS:
                setattr(evidence, field_name, getattr(lit, field_name))
            return evidence
    if (found.kind == PHOTO and "collector" in selected and evidence.collector_number is None
            and (found.orientation_margin or 0.0) < UNSURE_ORIENTATION):
        turned = read(found.flipped())
        if turned.collector_number is not None:
            return turned
    return evidence


def _extract_card(
    loaded: LoadedScan,
    *,
    known_set_codes: Collection[str],
    engine: OcrEngine,
    selected: Collection[str],
    today: date | None,
    catalog: ReadCatalog | None,
    name: str | None,
    escalation: OcrEngine | None,
    rescue: OcrEngine | None,
    timings: MutableMapping[str, float] | None,
    executor: Executor | None,
) -> Evidence:
    """Run the selected extractors over a card alone (a scan, or a photo's card straightened).

    The collector block and the legal line are read from the card's bottom band, found once (`band.BottomBand`).
    The legal line's one consumer is Stage D's era check, a guard for a printing chosen by its number alone. When
    the collector reading settles the printing (confirmed by the catalogue with its set code, or with its set's
    known printed total) the guard has nothing to add and the legal line is not read again: its fields come from a
    collector read that held it (the 2003 and 1997 frames print the year beside the number) or stay empty.

    With `executor` the pixel analysis runs there while this thread reads the text lines: Tesseract releases the
    GIL while it recognises, so a card costs about the longer of the two instead of their sum. Both halves read
    the same images as without it, so the evidence is the same; the OCR engine stays on this thread."""
    img = loaded.image
    facts = classify_bleed(loaded.width, loaded.height)
    trim = trim_of(img, facts.has_bleed)
    analysis = executor.submit(_pixel_fields, img, trim, facts.has_bleed, selected, timings) if executor else None
    evidence = Evidence()
    settled = False
    if "geometry" in selected:
        evidence.width, evidence.height = facts.width, facts.height
        evidence.aspect_ratio = facts.aspect_ratio
        evidence.bleed_class = facts.bleed_class
    band = None
    if {"collector", "legal"} & set(selected):
        with _timed(timings, "collector"):
            band = BottomBand.of(crop_region(img, trim, layout.BAND))
    texts: tuple[str, ...] = ()
    skip: Block | None = None
    if "collector" in selected:
        assert band is not None
        with _timed(timings, "collector"):
            reading = read_collector(band, known_set_codes, engine, catalog=catalog, name=name,
                                     escalation=escalation, rescue=rescue)
        evidence.collector_raw = reading.raw
        evidence.collector_number = reading.number
        evidence.set_code_raw = reading.set_code_raw
        evidence.set_code = reading.set_code
        evidence.collector_total = reading.total
        evidence.collector_layout = reading.layout
        if _twins_matter(reading, catalog, name, star_twins):
            evidence.collector_star = _star(band, reading, rescue, _twins_total(reading, catalog, name))
        if _twins_matter(reading, catalog, name, letter_twins):
            evidence.collector_end_height = end_height(band, reading.block, reading.total)
        evidence.language = reading.parse.language
        settled, texts, skip = reading.settled, reading.texts, reading.block
    if "legal" in selected:
        assert band is not None
        year = (today or date.today()).year
        # The 2003 and 1997 frames print the year on the number's own line: a read that saw it costs nothing more.
        raw = next((text for text in texts if parse_copyright_year(text, year) is not None), None)
        if raw is None and not settled:
            with _timed(timings, "legal"):
                raw = read_legal(band, engine, accept=lambda text: parse_copyright_year(text, year) is not None,
                                 skip=skip, skip_is_credit=credit_only(texts))
            if raw is None:  # the number's block was the only legal line, and its reads hold its text
                raw = "\n".join(dict.fromkeys(texts))
        if raw is not None:
            evidence.legal_raw = raw
            evidence.copyright_year = parse_copyright_year(raw, year)
            evidence.proxy_marker = has_proxy_marker(raw)
    fields = analysis.result() if analysis else _pixel_fields(img, trim, facts.has_bleed, selected, timings)
    for field_name, value in fields.items():
        setattr(evidence, field_name, value)
    evidence.extractor_versions = {key: EXTRACTOR_VERSIONS[key] for key in EXTRACTORS if key in selected}
    return evidence


def _star(band: BottomBand, reading: CollectorReading, rescue: OcrEngine | None, total: int) -> bool | None:
    """Whether a legal line's number over `total` carries a star: what the pixels show (`star_mark`), else, when they
    cannot tell, what the rescue engine's probabilities of the line show clearly (`line_verify.star_seen`); None when
    neither tells."""
    assert reading.block is not None
    seen = star_before_slash(band, reading.block, total)
    if seen is not None or rescue is None:
        return seen
    line = recogniser_line(tight_view(band, reading.block, "legal"))
    number = normalise_collector_number(reading.number)
    return star_seen(rescue, line, number, total) if line is not None else None


def _twins_total(reading: CollectorReading, catalog: ReadCatalog | None, name: str | None) -> int:
    """The total a star twin's line is judged against: the one read, unless no set of the name's printings prints
    it (a misread: "83★/96" read "83298") and the printings with the number read, starred or not, are all in sets
    of one known total, which the line then prints whichever of them it is."""
    assert reading.total is not None
    printings = catalog.printings_of(name) if catalog is not None and name else ()
    if catalog is None or not printings or any(catalog.totals.get(code) == reading.total for code, _ in printings):
        return reading.total
    base = normalise_collector_number(reading.number).rstrip("*")
    totals = {catalog.totals.get(code) for code, number in printings if number.rstrip("*") == base}
    only = totals.pop() if len(totals) == 1 else None
    return only if only is not None else reading.total


def _twins_matter(reading: CollectorReading, catalog: ReadCatalog | None, name: str | None,
                  twins: Callable[[str, str], bool]) -> bool:
    """Whether the glyph before a legal line's slash is worth judging (`star_mark`): a number and total were read on
    a legal line, and the name has a printing whose number is a twin of the one read (`fragments.star_twins`,
    `fragments.letter_twins`; without the catalogue: always). Elsewhere there is no twin to tell apart, and the
    card pays nothing."""
    if reading.layout not in (LEGAL_NUMBER, CENTRED) or reading.total is None or reading.block is None:
        return False
    if catalog is None or not name:
        return True
    read = normalise_collector_number(reading.number)
    return any(twins(read, other) for _, other in catalog.printings_of(name))


def _pixel_fields(img: Image.Image, trim: layout.TrimRect, has_bleed: bool, selected: Collection[str],
                  timings: MutableMapping[str, float] | None) -> dict[str, Any]:
    """The fields of the extractors that need no OCR (border colour, hashes, quality), by field name. All but the
    set symbol's hash work on the scan reduced to about `ANALYSIS_LONG_SIDE`; the reduction is made here, so with an
    executor it too runs beside the OCR."""
    factor = max(1, round(max(img.size) / ANALYSIS_LONG_SIDE))
    small = img.reduce(factor) if factor > 1 else img
    small_trim = trim_of(small, has_bleed)
    fields: dict[str, Any] = {}
    if "geometry" in selected:
        with _timed(timings, "geometry"):
            fields["border_color"] = border_color(small, small_trim)
    if "hashes" in selected:
        with _timed(timings, "hashes"):
            fields["art_phash"] = phash64(crop_region(small, small_trim, layout.ART_CROP))
            fields["symbol_phash"] = symbol_phash(crop_region(img, trim, layout.SYMBOL_CROP))
    if "quality" in selected:
        with _timed(timings, "quality"):
            fields["blur_variance"], fields["entropy"] = quality_of(small)
            fields["truncated"] = False
    return fields
