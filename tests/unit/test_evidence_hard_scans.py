"""The miss classes of hard scans, each on fixed scans built by the hard-data generator, read with the
catalogue and the card's name as a wired worker reads them; and accuracy floors on a small hard set, with what the
Stage D calculators make of the evidence (no wrong machine vote, no no-match vote)."""

from __future__ import annotations

import re
from datetime import date

import pytest
from PIL import Image

from stage_e_dagster.demo.catalog import generate_catalog
from stage_e_dagster.demo.hard import HardScan, plan_scans, read_catalog_of
from stage_e_dagster.demo.symbols import render_set_symbol
from stage_e_dagster.domain.calculators import run_calculators
from stage_e_dagster.domain.catalog import CardRef, ExpansionRef, PrintingRef
from stage_e_dagster.domain.evidence.extract import extract_evidence
from stage_e_dagster.domain.evidence.hashing import symbol_phash
from stage_e_dagster.domain.evidence.model import Evidence
from stage_e_dagster.domain.evidence.ocr import TesserocrEngine

CARDS = generate_catalog(2000, seed=5)
PLAN = plan_scans(CARDS, 300, "hard", seed=1)
CATALOG = read_catalog_of(CARDS)


class RecordingEngine:
    """The real engine, keeping the text of every read so a test can show which miss class a scan hit."""

    name = "tesserocr"

    def __init__(self, inner: TesserocrEngine) -> None:
        self.inner, self.texts = inner, []

    def read(self, image: Image.Image, psm: int = 6, whitelist: str | None = None) -> str:
        text = self.inner.read(image, psm, whitelist)
        self.texts.append(text)
        return text


@pytest.fixture(scope="module")
def engine() -> TesserocrEngine:
    return TesserocrEngine()


def read(scan: HardScan, engine: TesserocrEngine) -> tuple[Evidence, list[str]]:
    recorder = RecordingEngine(engine)
    found = extract_evidence(scan.jpeg(), known_set_codes=CATALOG.set_codes, engine=recorder, catalog=CATALOG,
                             name=scan.card["name"], only={"collector"})
    assert isinstance(found, Evidence)
    return found, recorder.texts


def expected(card: dict) -> tuple[str, str | None]:
    return card["collector_number"], card["set"] if card["frame"] == "2015" else None


@pytest.mark.parametrize("index", [17, 21, 103, 5])
def test_slash_read_as_a_digit(engine: TesserocrEngine, index: int) -> None:
    found, texts = read(PLAN[index], engine)
    assert any(re.search(r"\d{5,}", text) for text in texts), texts  # "31/320" came out as "311320"
    assert (found.collector_number, found.set_code) == expected(PLAN[index].card), texts


@pytest.mark.parametrize("index", [10, 11, 24])
def test_artist_credit_brush_read_as_a_lone_digit(engine: TesserocrEngine, index: int) -> None:
    scan = PLAN[index]
    assert scan.style.layout == "credit"
    found, texts = read(scan, engine)
    assert any(re.search(r"EN\W*\s*7\s+[A-Z][a-z]", text) for text in texts), texts  # "YZC + EN 7 Wen"
    assert (found.collector_number, found.set_code) == expected(scan.card), texts


@pytest.mark.parametrize("index", [102, 120, 165])
def test_empty_or_garbage_first_read_on_a_small_scan_escalates(engine: TesserocrEngine, index: int) -> None:
    scan = PLAN[index]
    assert scan.long_side <= 880 and scan.degradation is not None
    found, texts = read(scan, engine)
    assert len(texts) > 1, texts  # the first read was not confirmed
    assert (found.collector_number, found.set_code) == expected(scan.card), texts


@pytest.mark.parametrize("index", [1, 4, 15, 27, 33])
def test_old_style_illus_variants_are_never_a_set_code(engine: TesserocrEngine, index: int) -> None:
    scan = PLAN[index]
    assert scan.style.layout == "old-style" and scan.card["frame"] != "2015"
    found, texts = read(scan, engine)
    credit_lines = [line for text in texts for line in text.splitlines()[1:2]]
    assert any(not line.startswith("Illus.") for line in credit_lines), texts  # OCR mangled "Illus."
    assert (found.collector_number, found.set_code, found.set_code_raw) == (scan.card["collector_number"], None,
                                                                             None), texts


@pytest.mark.slow
def test_accuracy_floors_and_machine_votes_on_a_small_hard_set(engine: TesserocrEngine) -> None:
    scans = PLAN[:48]
    refs = {c["id"]: PrintingRef(i, c["id"], c["name"], c["set"], c["collector_number"],
                                 border_color=c["border_color"], frame=c["frame"]) for i, c in enumerate(CARDS, 1)}
    by_name: dict[str, list[PrintingRef]] = {}
    for ref in refs.values():
        by_name.setdefault(ref.name, []).append(ref)
    released = {c["set"]: date.fromisoformat(c["released_at"]) for c in CARDS}
    expansions = {code: ExpansionRef(code, day, symbol_phash(render_set_symbol(code)))
                  for code, day in released.items()}
    numbers = codes = votes = wrong = no_match = 0
    for index, scan in enumerate(scans):
        found = extract_evidence(scan.jpeg(), known_set_codes=CATALOG.set_codes, engine=engine, catalog=CATALOG,
                                 name=scan.card["name"], today=date(2026, 1, 1))
        assert isinstance(found, Evidence)
        number, code = expected(scan.card)
        numbers += found.collector_number == number
        codes += found.set_code == code
        outcome = run_calculators(CardRef(index, scan.card["name"]), found, by_name[scan.card["name"]], expansions)
        for vote in outcome.votes:
            votes += 1
            no_match += vote.is_no_match
            wrong += vote.printing_id is not None and vote.printing_id != refs[scan.card["id"]].id
    print(f"\nhard set, {len(scans)} scans: number {numbers}, set code {codes}, {votes} votes, {wrong} wrong")
    assert numbers >= 0.9 * len(scans) and codes >= 0.9 * len(scans)
    assert wrong == 0 and no_match == 0 and votes >= 0.9 * len(scans)
