"""Collector-block and legal-line OCR: find the text in the card's bottom band, read the block that holds the
number once, and read again only when that is not enough.

The band is read as a page (`band.BottomBand`): its text blocks, left to right. The number is in the block at the
left (modern frames, and the 2003 frame's left-aligned legal line) or in the centre (the 1997 frame's centred legal
line); the catalogue's layouts for the card's name say which to try first, and none for a name printed only
before collector numbers. The first read is cheap: the block is cut to its lines, scaled to Tesseract's preferred
text height and binarised. It is enough when the catalogue confirms it (`read_catalog.resolve`). Otherwise the
reader escalates through heavier variants (the crop's blur deconvolved, greyscale, deskew, denoise and sharpen, a
larger scale; on the escalation engine where one is given) until a reading is confirmed or two plausible readings
agree, and moves to the next block when a block's reads see no digit. Small, blurred or unconfirmed scans pay for
the extra reads; the common case does not.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, replace

from PIL import Image

from stage_e_dagster.domain.evidence import preprocess as pp
from stage_e_dagster.domain.evidence.band import Block, BottomBand
from stage_e_dagster.domain.evidence.collector_views import (
    Prepared,
    family,
    number_blocks,
    number_line_first,
    recogniser_line,
    shape_family,
    tight_view,
)
from stage_e_dagster.domain.evidence.legal_text import LEGAL_WORDS
from stage_e_dagster.domain.evidence.line_verify import doubted, verify
from stage_e_dagster.domain.evidence.ocr import OcrEngine
from stage_e_dagster.domain.evidence.parse import CollectorParse, normalise_collector_number, parse_collector
from stage_e_dagster.domain.evidence.read_catalog import ReadCatalog, resolve
from stage_e_dagster.domain.printed_lines import CENTRED, LEGAL_NUMBER, NUMBERLESS

LARGE_LINE_HEIGHT = 44
DIGITLESS_STOP = 3
"""Reads after which the ladder stops when none of them held a digit: a card back, a blank crop."""
BLOCK_DIGITLESS = 2
"""Reads of one block without a digit after which the reader tries the next block: the number is elsewhere."""
BLOCK_NUMBERLESS = 3
"""Reads of one block that found no number, digits or not, after which the reader tries the next block."""
FALLBACK_STEPS = 3
"""Ladder steps a whole block gets after its tight view was read in vain."""
OTHER_KIND_STEPS = 2
"""Ladder steps of the tight view of the kind a block's shape left open, read when the first kind found nothing."""


@dataclass(frozen=True)
class CollectorReading:
    """The outcome of reading a collector block: raw OCR text, its parse, the number and set code it stands for.

    `confirmed`: the catalogue holds this printing of the card's name and the reading singles it out; `settled`:
    and the set code or the set's known printed total was read with it (`settled_if_agreed`: so it is once a
    second read agrees, its one doubt being a neighbour one digit away). `accepted`: confirmed, or plausible and
    agreed by another read, or plausible on the only evidence there is. `layout`: the layout read
    (`domain.printed_lines`; a legal-line number in a centred block is the 1997 frame's). `texts`: every read's
    text, so the legal line's year can be taken from reads that already saw it.
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
    total: int | None = None
    layout: str | None = None
    texts: tuple[str, ...] = ()
    block: Block | None = None
    settled_if_agreed: bool = False


def number_views(band: BottomBand, expected: Collection[str] | None) -> list[tuple[Prepared, Block, int]]:
    """What to read for the number, in order, each with how many ladder steps it gets: the tight view of the first
    block (where the expected layouts agree the number stands, else where the block's shape says), then the whole
    blocks, a few steps each."""
    blocks = number_blocks(band, expected)
    views: list[tuple[Prepared, Block, int]] = []
    if blocks:
        kind = family(expected) or shape_family(blocks[0], band.blocks.glyph)
        views.append((tight_view(band, blocks[0], kind), blocks[0], len(LADDER)))
        if family(expected) is None and kind == "legal" and number_line_first(blocks[0], band.blocks.glyph):
            other = replace(tight_view(band, blocks[0], "code"), guessed=True)
            views.append((other, blocks[0], OTHER_KIND_STEPS))
        if family(expected) is None and kind == "code" and len(blocks[0].lines) > 1 and \
                (not expected or {LEGAL_NUMBER, CENTRED} & set(expected)):
            other = replace(tight_view(band, blocks[0], "legal"), guessed=True, after_legal_words=True)
            views.append((other, blocks[0], OTHER_KIND_STEPS))
    steps = FALLBACK_STEPS if views else len(LADDER)
    views += [(Prepared.of_block(band, block), block, steps) for block in blocks]
    return views


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
              name: str | None = None, block: Block | None = None) -> CollectorReading:
    """A reading of OCR text: parsed, resolved against the catalogue and judged (`block`: where it was read)."""
    parse = parse_collector(raw)
    found = resolve(parse, known, catalog, name)
    snapped = found.set_code is not None
    set_code = found.set_code if snapped else (found.set_code_raw.lower() if found.set_code_raw else None)
    needs_code = bool(known) and bool(parse.set_tokens)
    accepted = found.confirmed or (_plausible(parse, found.number) and (snapped or not needs_code))
    layout = CENTRED if parse.layout == LEGAL_NUMBER and block is not None and block.place == "centre" \
        else parse.layout
    return CollectorReading(raw, parse, found.set_code_raw, set_code, snapped, accepted, attempts, found.number,
                            found.confirmed, found.settled, found.total, layout, (raw,), block,
                            found.settled_if_agreed)


def _score(reading: CollectorReading) -> int:
    return (
        (8 if reading.accepted else 0)
        + (4 if reading.number else 0)
        + (2 if reading.snapped else 0)
        + (1 if reading.parse.total else 0)
    )


def read_collector(
    crop: Image.Image | BottomBand,
    known_set_codes: Collection[str],
    engine: OcrEngine,
    votes_needed: int = 2,
    max_attempts: int | None = None,
    *,
    catalog: ReadCatalog | None = None,
    name: str | None = None,
    escalation: OcrEngine | None = None,
    rescue: OcrEngine | None = None,
) -> CollectorReading:
    """Read the collector number in `crop` (the card's bottom band, or any crop holding the block): ladder steps
    in turn over each block that may hold it until one reading is confirmed by the catalogue (given `catalog` and
    the card's `name`) or `votes_needed` accepted readings agree.

    Agreement between differently preprocessed readings catches the confident single-digit misreads (5 -> 6)
    that a parse alone cannot. With neither, the accepted reading with most votes (then the best-scored reading)
    wins and is marked accepted only if it was. `max_attempts` caps the reads of each block.

    `rescue` (a second engine, `ocr_rapid`) reads the first view when no Tesseract read was confirmed: its grey
    image, then its blur undone (`RESCUE_VARIANTS`). A reading the catalogue confirms is kept, and so is one that
    agrees with an earlier accepted read (the other variant's, or a Tesseract read: two engines seldom misread
    alike) on a number of the name's printings; its other reads neither vote nor stand as the best reading. Those
    reads are skipped on a card whose name has a numberless printing when no read found a number where one would
    stand: that card prints none. Last, the engine's character probabilities of the number line are asked which of
    the name's printed strings it shows (`line_verify`): a string only a numbered printing prints, at its place.
    """
    known = catalog.set_codes if catalog is not None else known_set_codes
    band = crop if isinstance(crop, BottomBand) else BottomBand.of(crop)
    expected = catalog.expected_layouts(name) if catalog is not None else None
    views = number_views(band, expected)
    if not views and expected and all(kind == NUMBERLESS for kind in expected):
        return CollectorReading("", parse_collector(""), None, None, False, False, 0)
    if not views:
        views = [(Prepared(band.image, []), None, len(LADDER))]  # no block: read the whole band
    readings: list[CollectorReading] = []
    votes: dict[tuple[str | None, str | None], int] = {}
    maybe_numberless = bool(expected) and NUMBERLESS in expected
    for view, block, allowed in views:
        if maybe_numberless and readings and not any(r.number for r in readings) and not view.guessed:
            break  # a printing of the name prints no number, and where the number would stand there is none
        if view.after_legal_words and not any(LEGAL_WORDS.search(r.raw) for r in readings):
            continue  # a short legal line looks like a code block; without its words, the block is one
        seen: list[CollectorReading] = []
        for step in LADDER[:min(allowed, max_attempts or allowed)]:
            reader = escalation if step.escalate and escalation is not None else engine
            reading = read_text(reader.read(step.image(view), psm=6), known, len(readings) + 1, catalog, name, block)
            if reading.confirmed:
                return replace(reading, texts=tuple(r.raw for r in readings) + (reading.raw,))
            readings.append(reading)
            seen.append(reading)
            digitless = not any(ch.isdigit() for r in seen for ch in r.raw)
            if digitless and len(seen) >= (DIGITLESS_STOP if block is None else BLOCK_DIGITLESS):
                break  # no read of this view has seen a digit: the number is elsewhere, or nowhere
            if block is not None and len(seen) >= BLOCK_NUMBERLESS and not any(r.number for r in seen):
                break  # digits, but no number where one would stand (a copyright year, specks): try elsewhere
            if reading.accepted:
                key = (reading.number, reading.set_code)
                votes[key] = votes.get(key, 0) + 1
                if votes[key] >= votes_needed and not _foreign(reading, catalog, name):
                    return _agreed(reading, tuple(r.raw for r in readings), views[0][0], rescue, catalog, name)
    rescued = _rescue(views[0], rescue, known, catalog, name, readings, maybe_numberless, votes, votes_needed)
    if rescued is not None:
        return rescued
    best = max(readings, key=lambda r: (votes.get((r.number, r.set_code), 0) if r.accepted else 0, _score(r)))
    return replace(best, attempts=len(readings), texts=tuple(r.raw for r in readings))


def _foreign(reading: CollectorReading, catalog: ReadCatalog | None, name: str | None) -> bool:
    """Whether the catalogue knows the card's name and no printing of it has the reading's number: reads that agree
    on such a number agree on a misread (the same smeared digits read alike), so they do not end the search."""
    printings = catalog.printings_of(name) if catalog is not None else ()
    norm = normalise_collector_number(reading.number)
    return bool(printings) and all(number != norm for _, number in printings)


RESCUE_VARIANTS: tuple[Callable[[Prepared], Image.Image], ...] = (
    lambda p: pp.pad(p.text()),
    lambda p: pp.pad(p.deblurred().text()),
)
"""What the rescue engine reads of the first view, in turn: PP-OCR reads grey images, and each of these rescues
lines the other does not."""


def _rescue(view: tuple[Prepared, Block | None, int], rescue: OcrEngine | None, known: Collection[str],
            catalog: ReadCatalog | None, name: str | None, readings: list[CollectorReading],
            maybe_numberless: bool, votes: Mapping[tuple[str | None, str | None], int],
            votes_needed: int) -> CollectorReading | None:
    """The rescue engine's confirmed or agreed reading of the first view, or None (see `read_collector`)."""
    if rescue is None or catalog is None or name is None:
        return None
    prepared, block, _ = view
    tally = dict(votes)
    for variant in RESCUE_VARIANTS if not maybe_numberless or any(r.number for r in readings) else ():
        reading = read_text(rescue.read(variant(prepared), psm=6), known, len(readings) + 1, catalog, name, block)
        texts = tuple(r.raw for r in readings) + (reading.raw,)
        if reading.confirmed:
            return replace(reading, texts=texts)
        if reading.accepted and not _foreign(reading, catalog, name):
            key = (reading.number, reading.set_code)
            tally[key] = tally.get(key, 0) + 1
            if tally[key] >= votes_needed:
                return _agreed(reading, texts, prepared, rescue, catalog, name)
    return _verified(prepared, block, rescue, known, catalog, name, readings)


def _agreed(reading: CollectorReading, texts: tuple[str, ...], tight: Prepared, rescue: OcrEngine | None,
            catalog: ReadCatalog | None, name: str | None) -> CollectorReading:
    """A reading that reads agreed on: settled when its one doubt was a neighbour one digit away, which agreement
    removes; withdrawn (no number) when the rescue engine's probabilities of the number line (`tight`'s first)
    fit another printing of the name better, for two reads of one engine can smear a digit alike."""
    if reading.settled or not reading.settled_if_agreed:
        return replace(reading, texts=texts)
    line = recogniser_line(tight)
    if catalog is not None and name is not None and reading.number is not None and line is not None:
        code = reading.set_code if reading.snapped else None
        if doubted(rescue, line, catalog, name, normalise_collector_number(reading.number), code):
            return replace(reading, texts=texts, number=None, accepted=False, confirmed=False)
    return replace(reading, texts=texts, settled=True)


def _verified(prepared: Prepared, block: Block | None, rescue: OcrEngine, known: Collection[str],
              catalog: ReadCatalog, name: str, readings: list[CollectorReading]) -> CollectorReading | None:
    """The printing the number line (the view's first) shows by the rescue engine's character probabilities
    (`line_verify.verify`), read as its printed string; None unless the catalogue confirms it. A string one digit
    from a neighbour in its set (a basic land's) is settled too: the choice beat that neighbour's string by the
    margin, which is the second opinion an agreeing read would give."""
    line = recogniser_line(prepared)
    chosen = verify(rescue, line, catalog, name) if line is not None else None
    reading = chosen and read_text(chosen.reads_as, known, len(readings) + 1, catalog, name, block)
    if not reading or not (reading.confirmed or reading.settled_if_agreed):
        return None
    return replace(reading, texts=tuple(r.raw for r in readings) + (reading.raw,),
                   settled=reading.settled or reading.settled_if_agreed)
