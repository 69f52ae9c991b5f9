"""Photo benchmark with the reader: `bench/photos.py`'s photos, each found card read by the real Stage C reader and
judged by the real Stage D calculators.

Fills `photos.COLUMNS`: "number read" (the collector number Stage C extracts from the photo's card is the printing's)
and "voted right" / "voted wrong" (the Stage D calculators' machine votes over that evidence: a vote for the printing
shown, or for another). Each runs on every card the finder answered for a photo, with `extract_from_loaded` exactly
as Stage C calls it on a decoded photo (the finder again, the card straightened, read with the catalogue's knowledge
and the card's name, turned half a turn once when the number did not read and the way up was unsure), one
Tesseract engine and one rescue engine per worker (`STAGE_E_OCR_RESCUE`, as a worker reads it: `none` measures the
reader without it). Precision is right votes over all machine votes, on found and not found alike.

    python bench/photo_reads.py                 # the photo benchmark's arguments (see bench/photos.py)
    python bench/photo_reads.py --photos 40 --skips 4
"""

from __future__ import annotations

import os
import sys
from collections import defaultdict
from datetime import date
from functools import cache
from typing import Any

import photos

from stage_e_dagster.demo.catalog import generate_catalog
from stage_e_dagster.demo.hard import read_catalog_of
from stage_e_dagster.demo.info import layout_of_card
from stage_e_dagster.demo.symbols import render_set_symbol
from stage_e_dagster.domain.calculators import run_calculators
from stage_e_dagster.domain.catalog import CardRef, ExpansionRef, PrintingRef
from stage_e_dagster.domain.evidence.card_finder import FoundCard
from stage_e_dagster.domain.evidence.extract import EXTRACTORS, extract_from_loaded
from stage_e_dagster.domain.evidence.hashing import symbol_phash
from stage_e_dagster.domain.evidence.load import LoadedScan
from stage_e_dagster.domain.evidence.model import Evidence
from stage_e_dagster.domain.evidence.ocr import make_engine
from stage_e_dagster.domain.evidence.ocr_rapid import make_rescue_engine
from stage_e_dagster.domain.evidence.parse import normalise_collector_number
from stage_e_dagster.domain.printed_lines import NUMBERLESS


@cache
def _world() -> tuple[Any, Any, dict[str, list[PrintingRef]], dict[str, int], dict[str, ExpansionRef], Any]:
    """The bench's catalogue as each stage sees it, and this worker's OCR engines (built once per worker)."""
    cards = generate_catalog(photos.PRINTINGS, seed=photos.CATALOG_SEED)
    by_name: dict[str, list[PrintingRef]] = defaultdict(list)
    ids: dict[str, int] = {}
    released: dict[str, str] = {}
    for index, card in enumerate(cards, 1):
        ref = PrintingRef(index, card["id"], card["name"], card["set"], card["collector_number"],
                          border_color=card["border_color"], frame=card["frame"], layout=card.get("layout"))
        by_name[card["name"]].append(ref)
        ids[card["id"]] = index
        released[card["set"]] = card["released_at"]
    expansions = {code: ExpansionRef(code, date.fromisoformat(str(day)), symbol_phash(render_set_symbol(code)))
                  for code, day in released.items()}
    rescue = make_rescue_engine(os.environ.get("STAGE_E_OCR_RESCUE", "rapidocr"))
    return (make_engine("tesserocr", None), read_catalog_of(cards), dict(by_name), ids, expansions, rescue)


_LAST: list[tuple[FoundCard, Evidence | None, list[int]]] = []


def _judged(found: FoundCard, printing: dict[str, Any], photo: LoadedScan,
            data: bytes) -> tuple[Evidence | None, list[int]]:
    """Stage C's evidence for the photo's card and the printings Stage D's machines vote for (memoised for the
    last card, so the columns share one reading; the card itself is held, so that no later card takes its id)."""
    if not _LAST or _LAST[0][0] is not found:
        _LAST.clear()
        engine, catalog, by_name, _ids, expansions, rescue = _world()
        evidence = extract_from_loaded(photo, known_set_codes=catalog.set_codes, engine=engine,
                                       selected=EXTRACTORS, catalog=catalog, name=printing["name"], data=data,
                                       rescue=rescue)
        if not isinstance(evidence, Evidence):
            _LAST.append((found, None, []))
        else:
            outcome = run_calculators(CardRef(0, printing["name"]), evidence, by_name.get(printing["name"], []),
                                      expansions)
            _LAST.append((found, evidence, [v.printing_id for v in outcome.votes if v.printing_id is not None]))
    return _LAST[0][1], _LAST[0][2]


def number_read(found: FoundCard, printing: dict[str, Any], photo: LoadedScan, data: bytes) -> bool:
    """The number read is the card's; a card that prints no number (before 1998) counts when none was read."""
    evidence, _ = _judged(found, printing, photo, data)
    if evidence is None:
        return False
    if layout_of_card(printing) == NUMBERLESS:
        return evidence.collector_number is None
    return normalise_collector_number(evidence.collector_number) == normalise_collector_number(
        printing["collector_number"])


def voted_right(found: FoundCard, printing: dict[str, Any], photo: LoadedScan, data: bytes) -> bool:
    _, votes = _judged(found, printing, photo, data)
    return _world()[3][printing["id"]] in votes


def voted_wrong(found: FoundCard, printing: dict[str, Any], photo: LoadedScan, data: bytes) -> bool:
    _, votes = _judged(found, printing, photo, data)
    return any(v != _world()[3][printing["id"]] for v in votes)


photos.COLUMNS[:] = [photos.Column("number read", number_read), photos.Column("voted right", voted_right),
                     photos.Column("voted wrong", voted_wrong, bad=True)]

if __name__ == "__main__":
    sys.exit(photos.main())
