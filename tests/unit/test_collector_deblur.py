"""Blur undone before the second read: `preprocess.deblurred` pulls blurred small type back towards its strokes, the
reader's second read is of the deblurred crop, and three of the first renderer's blurred tuning scans are read
right only with it."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFilter, ImageFont
from scipy import ndimage

from stage_e_dagster.demo.catalog import generate_catalog
from stage_e_dagster.demo.hard import HardScan, plan_scans, read_catalog_of
from stage_e_dagster.demo.info import layout_of_card
from stage_e_dagster.domain.evidence import collector
from stage_e_dagster.domain.evidence import preprocess as pp
from stage_e_dagster.domain.evidence.band import BottomBand
from stage_e_dagster.domain.evidence.collector import number_views, read_collector
from stage_e_dagster.domain.evidence.extract import extract_evidence
from stage_e_dagster.domain.evidence.model import Evidence
from stage_e_dagster.domain.evidence.ocr import TesserocrEngine
from stage_e_dagster.domain.evidence.parse import normalise_collector_number
from stage_e_dagster.domain.printed_lines import CODE_LAYOUTS


def _type(text: str = "205/238", size: int = 13) -> Image.Image:
    """Dark small type on white, as a collector crop's text image holds it."""
    img = Image.new("L", (140, 40), 255)
    ImageDraw.Draw(img).text((8, 10), text, font=ImageFont.load_default(size=size), fill=0)
    return img


def _blurred(img: Image.Image, sigma: float) -> Image.Image:
    return Image.fromarray(ndimage.gaussian_filter(np.asarray(img, dtype=np.float64), sigma).astype(np.uint8), "L")


def test_deblurring_brings_blurred_type_closer_to_its_strokes() -> None:
    sharp = np.asarray(_type(), dtype=np.float64)
    for sigma in (0.8, 1.1, 1.4):  # the blur the damage spans
        blurred = _blurred(_type(), sigma)
        restored = np.asarray(pp.deblurred(blurred), dtype=np.float64)
        before = np.abs(np.asarray(blurred, dtype=np.float64) - sharp).mean()
        after = np.abs(restored - sharp).mean()
        assert after < 0.95 * before, (sigma, before, after)


def test_deblurring_moves_no_text() -> None:
    blurred = _blurred(_type(), 1.1)
    ink_before = 255.0 - np.asarray(blurred, dtype=np.float64)
    ink_after = 255.0 - np.asarray(pp.deblurred(blurred), dtype=np.float64)
    for axis in (0, 1):
        assert abs(ndimage.center_of_mass(ink_before)[axis] - ndimage.center_of_mass(ink_after)[axis]) < 0.5
    assert pp.deblurred(blurred).size == blurred.size


class RecordingEngine:
    """Reads nothing; keeps every image it is given."""

    name = "recording"

    def __init__(self) -> None:
        self.images: list[Image.Image] = []

    def read(self, image: Image.Image, psm: int = 6, whitelist: str | None = None) -> str:
        self.images.append(image.copy())
        return "~"


def test_the_second_read_is_of_the_deblurred_crop() -> None:
    crop = Image.new("RGB", (220, 90), (20, 20, 20))
    ImageDraw.Draw(crop).text((20, 30), "205/238", font=ImageFont.load_default(size=14), fill=(240, 240, 240))
    crop = crop.filter(ImageFilter.GaussianBlur(1.1))
    engine = RecordingEngine()
    read_collector(crop, set(), engine, max_attempts=2)
    prepared = number_views(BottomBand.of(crop), None)[0][0]  # the first view: the block's tight crop
    expected = pp.pad(prepared.deblurred().text())
    assert len(engine.images) >= 2  # each view of the block gets `max_attempts` reads
    assert engine.images[1].tobytes() == expected.tobytes()
    assert engine.images[1].tobytes() != pp.pad(prepared.text()).tobytes()  # not the plain grey crop


CARDS = generate_catalog(2000, seed=5)
CATALOG = read_catalog_of(CARDS)
TUNING = plan_scans(CARDS, 1200, "hard", seed=101)  # the first renderer's scans the reader was tuned on


def _read(scan: HardScan, engine: TesserocrEngine) -> tuple[str | None, str | None]:
    found = extract_evidence(scan.jpeg(), known_set_codes=CATALOG.set_codes, engine=engine, catalog=CATALOG,
                             name=scan.card["name"], only={"collector"})
    assert isinstance(found, Evidence)
    return normalise_collector_number(found.collector_number) or None, found.set_code


@pytest.mark.parametrize("index", [80, 169, 206, 229])
def test_blurred_small_type_is_read_once_deblurred(index: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Blurred small scans (blur 0.8-1.3 px, 880-1040 px) whose every other read misses or misreads a digit."""
    scan = TUNING[index]
    assert scan.degradation is not None and scan.degradation.blur_radius >= 0.8 and scan.long_side <= 1040
    engine = TesserocrEngine()
    layout = layout_of_card(scan.card)
    want = (normalise_collector_number(scan.card["collector_number"]),
            scan.card["set"] if layout in CODE_LAYOUTS else None)
    assert _read(scan, engine) == want
    monkeypatch.setattr(collector, "LADDER", tuple(s for s in collector.LADDER if s.name != "deblurred-grey"))
    assert _read(scan, engine)[0] != want[0]  # without the deblurred read the number is missed
