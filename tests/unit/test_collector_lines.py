"""Which bands of a collector crop are the collector block's lines: not a remnant of the frame at the crop's top,
not a band much thinner than the block's type (synthetic ink masks), and a tuning scan read right because of it."""

from __future__ import annotations

import numpy as np
import pytest

from stage_e_dagster.demo.catalog import generate_catalog
from stage_e_dagster.demo.hard import plan_scans, read_catalog_of
from stage_e_dagster.domain.evidence import collector
from stage_e_dagster.domain.evidence.extract import extract_evidence
from stage_e_dagster.domain.evidence.model import Evidence
from stage_e_dagster.domain.evidence.ocr import TesserocrEngine

HEIGHT, WIDTH = 90, 220


def _glyphs(ink: np.ndarray, top: int, height: int, count: int = 7) -> None:
    """A row of glyph-like blocks `height` tall starting at row `top`."""
    for k in range(count):
        left = 20 + k * 12
        ink[top : top + height, left : left + 8] = True


def _block() -> np.ndarray:
    ink = np.zeros((HEIGHT, WIDTH), dtype=bool)
    _glyphs(ink, 40, 12)
    _glyphs(ink, 58, 12, count=12)
    return ink


def test_a_thin_frame_remnant_above_the_block_is_no_line() -> None:
    ink = _block()
    ink[22:29, 15:120] = True  # a 7 px sliver of the frame's edge, well below the crop's top
    ink[22:29, 60:64] = False  # short of a solid rule across the crop
    assert [(line.top, line.bottom) for line in collector._lines(ink, HEIGHT)] == [(40, 52), (58, 70)]


def test_a_band_at_the_crops_top_is_no_line() -> None:
    ink = _block()
    _glyphs(ink, 1, 12)  # glyph-sized, but starting on the crop's second row: what is left of the frame
    assert [(line.top, line.bottom) for line in collector._lines(ink, HEIGHT)] == [(40, 52), (58, 70)]


def test_the_block_alone_keeps_both_lines() -> None:
    assert [(line.top, line.bottom) for line in collector._lines(_block(), HEIGHT)] == [(40, 52), (58, 70)]


def test_a_scan_with_the_frame_edge_in_its_crop_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """A first-renderer tuning scan (1200 px, old frame, blur 1.1 px) whose crop starts on the frame's pink edge:
    taken for the first line, it set the scale and nothing was read."""
    cards = generate_catalog(2000, seed=5)
    catalog = read_catalog_of(cards)
    scan = plan_scans(cards, 349, "hard", seed=101)[348]
    engine = TesserocrEngine()

    def number() -> str | None:
        found = extract_evidence(scan.jpeg(), known_set_codes=catalog.set_codes, engine=engine, catalog=catalog,
                                 name=scan.card["name"], only={"collector"})
        assert isinstance(found, Evidence)
        return found.collector_number

    assert number() == scan.card["collector_number"]
    monkeypatch.setattr(collector, "TOP_EDGE", 0.0)
    monkeypatch.setattr(collector, "TYPE_SHARE", 0.0)
    assert number() != scan.card["collector_number"]
