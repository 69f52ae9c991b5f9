"""The rescue engine and the cleared margin: what the reader does for a collector number Tesseract cannot read.

- After the Tesseract ladder found no reading the catalogue confirms, the second engine (`ocr_rapid`) reads the
  first view; only a reading the catalogue confirms is kept, never its other reads.
- The margin of a text crop outside its lines is white: a row of specks over the first line made Tesseract's block
  read drop that line.

Scans are the first renderer's tuning scans (the reader is tuned on them); each case names the breakage it
catches.
"""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from stage_e_dagster.demo.catalog import generate_catalog
from stage_e_dagster.demo.hard import HardScan, plan_scans, read_catalog_of
from stage_e_dagster.domain.evidence import collector_views
from stage_e_dagster.domain.evidence import preprocess as pp
from stage_e_dagster.domain.evidence.band import BottomBand
from stage_e_dagster.domain.evidence.collector import read_collector
from stage_e_dagster.domain.evidence.extract import extract_evidence
from stage_e_dagster.domain.evidence.model import Evidence
from stage_e_dagster.domain.evidence.ocr import TesserocrEngine
from stage_e_dagster.domain.evidence.ocr_rapid import RapidOcrEngine, lines_of, make_rescue_engine
from stage_e_dagster.domain.evidence.parse import normalise_collector_number
from stage_e_dagster.domain.evidence.read_catalog import ReadCatalog
from stage_e_dagster.domain.printed_lines import LEGAL_NUMBER, MODERN, NUMBERLESS

CARDS = generate_catalog(2000, seed=5)
CATALOG = read_catalog_of(CARDS)
TUNING = plan_scans(CARDS, 500, "hard", seed=101)


def _number(scan: HardScan, rescue: object | None) -> str:
    found = extract_evidence(scan.jpeg(), known_set_codes=CATALOG.set_codes, engine=TesserocrEngine(),
                             catalog=CATALOG, name=scan.card["name"], only={"collector"}, rescue=rescue)
    assert isinstance(found, Evidence)
    return normalise_collector_number(found.collector_number)


@pytest.mark.parametrize("index", [55, 218, 402])
def test_the_rescue_engine_reads_what_tesseract_cannot(index: int) -> None:
    """Breakage caught: the rescue not called, or its confirmed reading dropped."""
    scan = TUNING[index]
    want = normalise_collector_number(scan.card["collector_number"])
    assert _number(scan, None) != want  # every Tesseract read of this blurred line misses
    assert _number(scan, make_rescue_engine("rapidocr")) == want


class Scripted:
    """An engine that reads the same text of every image and counts its reads."""

    def __init__(self, text: str, name: str = "scripted") -> None:
        self.text, self.name, self.reads = text, name, 0

    def read(self, image: Image.Image, psm: int = 6, whitelist: str | None = None) -> str:
        self.reads += 1
        return self.text


def _band(first: str = "0171/274 C", second: str = "BFZ . EN Jon Doe", *, light: bool = False,
          size: int = 13) -> Image.Image:
    """A modern card's bottom band: a two-line collector block at the left, `first` over `second`; light type on
    black, or dark type on a light border (`light`)."""
    paper, ink = ((236, 236, 232), (20, 20, 20)) if light else ((15, 15, 15), (230, 230, 230))
    band = Image.new("RGB", (700, 80 if light else 70), paper)
    draw = ImageDraw.Draw(band)
    font = ImageFont.load_default(size=size)
    top, step = (24, 20) if light else (22, 18)
    draw.text((30 if light else 40, top), first, font=font, fill=ink)
    draw.text((30 if light else 40, top + step), second, font=font, fill=ink)
    return band


def _catalog(*numbers: str, name: str = "Ulamog's Crusher") -> ReadCatalog:
    return ReadCatalog.build([(name, "bfz", n) for n in numbers], totals={"bfz": 274}, layouts={"bfz": {MODERN}})


def test_a_rescue_read_the_catalogue_does_not_confirm_is_not_kept() -> None:
    """Breakage caught: an unconfirmed rescue read kept as the reading (a wrong number would vote)."""
    catalog = _catalog("171")
    rescue = Scripted("172/274 C\nBFZ • EN")  # a printing this name does not have
    reading = read_collector(_band(), set(), Scripted(""), catalog=catalog, name="Ulamog's Crusher", rescue=rescue)
    assert rescue.reads == 2  # both variants read
    assert reading.number is None
    rescue = Scripted("171/274 C\nBFZ • EN")
    reading = read_collector(_band(), set(), Scripted(""), catalog=catalog, name="Ulamog's Crusher", rescue=rescue)
    assert (reading.number, reading.confirmed, rescue.reads) == ("171", True, 1)


def test_no_rescue_without_the_catalogue_or_where_the_card_prints_no_number() -> None:
    """Breakage caught: the rescue read without a catalogue to confirm it, or on a card whose name has a numberless
    printing when no read found a number (that card prints none: the rescue would only cost)."""
    rescue = Scripted("171/274 C\nBFZ • EN")
    read_collector(_band(), {"bfz"}, Scripted(""), rescue=rescue)
    assert rescue.reads == 0
    numberless = ReadCatalog.build([("Ulamog's Crusher", "bfz", "171"), ("Ulamog's Crusher", "leg", "9")],
                                   totals={"bfz": 274}, layouts={"bfz": {MODERN}, "leg": {NUMBERLESS}})
    read_collector(_band(), set(), Scripted("BFZ EN"), catalog=numberless, name="Ulamog's Crusher", rescue=rescue)
    assert rescue.reads == 0


def test_rapidocr_reads_a_collector_line_on_one_thread() -> None:
    img = Image.new("L", (420, 90), 255)
    ImageDraw.Draw(img).text((12, 14), "171/274 C\nBFZ • EN Jon Doe", font=ImageFont.load_default(size=24), fill=0)
    engine = RapidOcrEngine()
    text = engine.read(img)
    assert text.splitlines()[0].replace(" ", "") == "171/274C"
    assert engine.threads() == {"det": 1, "rec": 1}


def test_boxes_become_lines_top_to_bottom_left_to_right() -> None:
    boxes = [[[60, 30], [90, 30], [90, 44], [60, 44]], [[0, 0], [50, 0], [50, 14], [0, 14]],
             [[0, 32], [50, 32], [50, 44], [0, 44]], [[55, 2], [80, 2], [80, 13], [55, 13]]]
    assert lines_of(boxes, ["EN", "171/274", "BFZ", "C"]) == "171/274 C\nBFZ EN"
    assert lines_of(None, None) == ""


def test_an_unknown_rescue_engine_is_refused() -> None:
    with pytest.raises(ValueError, match="rapidocr, none"):
        make_rescue_engine("easyocr")
    assert make_rescue_engine("none") is None


@pytest.mark.parametrize("index", [83, 343, 362])
def test_specks_over_the_first_line_do_not_cost_its_number(index: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Breakage caught: the text crop's margin kept as it is (what is left of a frame above the number line)."""
    scan = TUNING[index]
    want = normalise_collector_number(scan.card["collector_number"])
    assert _number(scan, None) == want
    monkeypatch.setattr(pp, "_margin_cleared", lambda crop, *args: crop)
    assert _number(scan, None) != want


def test_the_margin_outside_the_lines_is_white() -> None:
    gray = Image.new("L", (120, 60), 255)
    draw = ImageDraw.Draw(gray)
    draw.rectangle((10, 20, 100, 33), fill=0)  # the line's ink
    draw.point([(30, 15), (60, 16), (90, 15)], fill=0)  # specks above it, inside the crop's margin (6 rows)
    draw.point([(40, 38), (70, 39)], fill=0)  # and below it
    lines = [pp.Line(20, 34, 10, 101)]
    out = np.asarray(pp.text_crop(gray, lines, target=14))  # the crop's rows 14-40 at their own scale
    assert out[:4].min() > 200  # the specks' rows above are white
    assert out[-4:].min() > 200  # and below
    assert out[6:20].min() < 60  # the line is still there


def test_making_the_rescue_engine_imports_nothing_heavy() -> None:
    """A worker makes it at start for every run; most never read with it. Breakage caught: the engine's packages
    imported when it is made (0.8 s of CPU per worker start)."""
    import subprocess
    import sys

    probe = ("import sys; from stage_e_dagster.domain.evidence.ocr_rapid import make_rescue_engine; "
             "make_rescue_engine('rapidocr'); print(sorted({m.split('.')[0] for m in sys.modules} & "
             "{'rapidocr', 'onnxruntime', 'cv2'}))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "[]", (out.stdout, out.stderr[-2000:])


def test_reads_that_agree_on_a_number_the_name_has_no_printing_of_keep_reading() -> None:
    """The same smeared digits read alike: two reads agreeing on a number the catalogue has no printing of for this
    name agree on a misread. Breakage caught: agreement ending the search there (the rescue never runs)."""
    catalog = _catalog("171")
    tesseract = Scripted("174/274 C\nBFZ • EN")  # every view read alike; no printing of this name is #174
    rescue = Scripted("171/274 C\nBFZ • EN")
    reading = read_collector(_band(), set(), tesseract, catalog=catalog, name="Ulamog's Crusher", rescue=rescue)
    assert tesseract.reads > 2  # the ladder went on past the two agreeing reads
    assert (reading.number, reading.confirmed, rescue.reads) == ("171", True, 1)


def test_a_rescue_read_that_agrees_with_an_earlier_read_settles_a_neighbours_number() -> None:
    """One digit from another printing of the name in its set (a set's basic lands), a single read is never
    confirmed; two reads that agree settle it, and a rescue read agreeing with an earlier read (the other variant's,
    or Tesseract's) is such a pair. Breakage caught: rescue reads judged alone (the agreed number lost)."""
    lands = ReadCatalog.build([("Plains", "gav", "285"), ("Plains", "gav", "286")], totals={"gav": 293},
                              layouts={"gav": {MODERN}})
    rescue = Scripted("285/293 C\nGAV • EN")
    reading = read_collector(_band(), set(), Scripted(""), catalog=lands, name="Plains", rescue=rescue)
    assert (reading.number, reading.settled, rescue.reads) == ("285", True, 2)  # the two variants agree
    rescue = Scripted("285/293 C\nGAV • EN")
    tesseract = Once("285/293 C\nGAV")
    reading = read_collector(_band(), set(), tesseract, catalog=lands, name="Plains", rescue=rescue)
    assert tesseract.reads > 1 and rescue.reads == 1  # its other reads saw nothing; the rescue agreed at once
    assert (reading.number, reading.settled) == ("285", True)


class Once(Scripted):
    """An engine that reads its text the first time and nothing after."""

    def read(self, image: Image.Image, psm: int = 6, whitelist: str | None = None) -> str:
        self.reads += 1
        return self.text if self.reads == 1 else ""


def test_rescue_reads_agreeing_on_a_number_the_name_has_no_printing_of_are_not_kept() -> None:
    """Breakage caught: a rescue agreement kept on a number foreign to the name (it would stand as the reading)."""
    rescue = Scripted("172/274 C\nBFZ • EN")
    reading = read_collector(_band(), set(), Scripted(""), catalog=_catalog("171"), name="Ulamog's Crusher",
                             rescue=rescue)
    assert rescue.reads == 2 and reading.number is None


def test_a_long_artist_line_does_not_hide_a_basic_lands_number_line() -> None:
    """A basic land's name has printings of every layout, numberless ones among them, so the block's shape picks
    where to read first; a long artist's name makes a modern block look like a legal line, whose end holds no number.
    The number line is still read before the card is taken as numberless. Breakage caught: only the legal line's
    end read (the artist's name), and the card given up as numberless."""
    catalog = ReadCatalog.build([("Mountain", "rzk", "149"), ("Mountain", "rzk", "147"), ("Mountain", "ddd", "330"),
                                 ("Mountain", "lgn", "")], totals={"rzk": 153, "ddd": 350},
                                layouts={"rzk": [MODERN], "ddd": [LEGAL_NUMBER], "lgn": [NUMBERLESS]})
    # a short number line over "RZK • EN" and a long artist's name, as long as a legal line
    band = BottomBand.of(_band("149/153 L", "RZK . EN Desmond Achterberg-Fairweather", light=True, size=14))
    assert collector_views.shape_family(band.blocks.blocks[0], band.blocks.glyph) == "legal"  # the shape misleads
    reading = read_collector(band, catalog.set_codes, TesserocrEngine(), catalog=catalog, name="Mountain")
    assert (reading.number, reading.set_code) == ("149", "rzk")
