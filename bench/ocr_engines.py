"""Does a second OCR engine read the hard collector lines? Tesseract (the project's `TesserocrEngine`) against
RapidOCR (the project's rescue engine, `ocr_rapid.RapidOcrEngine`: PP-OCRv6 models on onnxruntime, shipped in the
`rapidocr` wheel), crop by crop.

The crops are the ones the reader reads first: on each degraded scan of the hard sets ("hard" from the first
renderer, "holdout" from the second), the card is found (`card_finder.find_card`), its bottom band cut as Stage C
cuts it, and the tight view of the number block taken (`collector.number_views`). Each engine reads it once:
Tesseract the ladder's first image (binarised, the reader's first read), RapidOCR its grey image (PP-OCR is
trained on natural images). A read is right when the reader's parse of its text (`collector.read_text`, with the
catalogue and the card's name) gives the printed number. The whole reader (`read_collector`, the Tesseract ladder
of up to eight reads over every block) runs on the same band: the scans it misreads or leaves unread are "the hard
lines", where the rescue engine earns its place (the reader reads them with it only after the ladder).

RapidOCR runs as an OCR worker would have to run it: offline (its models are in the wheel), on CPU, one thread
(onnxruntime's `intra_op_num_threads=1` and `inter_op_num_threads=1`, which OMP_THREAD_LIMIT does not reach;
OpenCV's pool set to one).

    python bench/ocr_engines.py                    # 80 scans per set, about three minutes on 2 cores
    python bench/ocr_engines.py --cards 40 --sets hard
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from PIL import Image
from stage_c_readers import card_name, render
from stage_c_sets import Scan, Worlds, plan_set

import testkit
from stage_e_dagster.domain import layout
from stage_e_dagster.domain.evidence import preprocess as pp
from stage_e_dagster.domain.evidence.band import BottomBand
from stage_e_dagster.domain.evidence.card_finder import CardNotFound, find_card
from stage_e_dagster.domain.evidence.collector import number_views, read_collector, read_text
from stage_e_dagster.domain.evidence.geometry import classify_bleed, crop_region, trim_of
from stage_e_dagster.domain.evidence.load import load_scan
from stage_e_dagster.domain.evidence.model import EvidenceSkip
from stage_e_dagster.domain.evidence.ocr import TesserocrEngine
from stage_e_dagster.domain.evidence.ocr_rapid import RapidOcrEngine
from stage_e_dagster.domain.evidence.parse import normalise_collector_number


@dataclass
class Tally:
    """Crops, right reads per engine, and CPU seconds per engine, over one set (or one subset of it)."""

    crops: int = 0
    right: dict[str, int] = field(default_factory=lambda: {"tesserocr": 0, "rapidocr": 0, "either": 0})
    wrong: dict[str, int] = field(default_factory=lambda: {"tesserocr": 0, "rapidocr": 0})
    cpu: dict[str, float] = field(default_factory=lambda: {"tesserocr": 0.0, "rapidocr": 0.0})

    def add(self, tess: bool | None, rapid: bool | None, cpu: dict[str, float]) -> None:
        """`tess`, `rapid`: True right, False a wrong number, None no number."""
        self.crops += 1
        self.wrong["tesserocr"] += tess is False
        self.wrong["rapidocr"] += rapid is False
        self.right["tesserocr"] += tess is True
        self.right["rapidocr"] += rapid is True
        self.right["either"] += tess is True or rapid is True
        for key, value in cpu.items():
            self.cpu[key] += value

    def line(self, label: str) -> str:
        n = max(1, self.crops)
        share = {k: f"{v:3d} ({100 * v / n:3.0f}%)" for k, v in self.right.items()}
        return (f"  {label:<28} {self.crops:4d} crops | right: tesserocr {share['tesserocr']}, rapidocr "
                f"{share['rapidocr']}, either {share['either']} | wrong number: tesserocr {self.wrong['tesserocr']}, "
                f"rapidocr {self.wrong['rapidocr']} | CPU ms/crop: tesserocr "
                f"{1000 * self.cpu['tesserocr'] / n:5.0f}, rapidocr {1000 * self.cpu['rapidocr'] / n:5.0f}")


def _timed(engine: Any, image: Image.Image) -> tuple[str, float]:
    started = time.process_time()
    text = engine.read(image, psm=6)
    return text, time.process_time() - started


def _band(blob: bytes) -> BottomBand | None:
    """The card's bottom band as Stage C cuts it (the finder first, then the trim and the band region)."""
    loaded = load_scan(blob)
    if isinstance(loaded, EvidenceSkip):
        return None
    found = find_card(loaded.image)
    if isinstance(found, CardNotFound):
        return None
    card = found.loaded(loaded)
    facts = classify_bleed(card.width, card.height)
    trim = trim_of(card.image, facts.has_bleed)
    return BottomBand.of(crop_region(card.image, trim, layout.BAND))


def run_set(name: str, worlds: Worlds, count: int, seed: int, tess: TesserocrEngine,
            rapid: RapidOcrEngine) -> dict[str, Tally]:
    world = worlds.of(name)
    plans: list[Scan] = [s for s in plan_set(name, worlds, count, seed) if s.degraded and s.number is not None]
    started = time.perf_counter()
    data = render(plans)
    print(f"\n== {name}: {len(plans)} degraded numbered scans, rendered in {time.perf_counter() - started:.0f}s; "
          f"load average {os.getloadavg()[0]:.2f}")
    tallies = {"all": Tally(), "reader wrong or unread": Tally()}
    rescued: list[str] = []
    for scan, blob in zip(plans, data, strict=True):
        band = _band(blob)
        name_ = card_name(scan)
        views = number_views(band, world.read_catalog.expected_layouts(name_)) if band is not None else []
        if band is None or not views:
            continue
        view, block, _ = views[0]
        want = normalise_collector_number(str(scan.number))

        def right(text: str, block: Any = block, name_: str = name_, want: str = want) -> bool | None:
            got = read_text(text, world.known, 1, world.read_catalog, name_, block).number
            return None if got is None else normalise_collector_number(got) == want

        tess_text, tess_cpu = _timed(tess, pp.pad(pp.binarise(view.text())))
        rapid_text, rapid_cpu = _timed(rapid, pp.pad(view.text()))
        reader = read_collector(band, world.known, tess, catalog=world.read_catalog, name=name_)
        reader_right = reader.number is not None and normalise_collector_number(reader.number) == want
        cpu = {"tesserocr": tess_cpu, "rapidocr": rapid_cpu}
        marks = (right(tess_text), right(rapid_text))
        tallies["all"].add(*marks, cpu)
        if not reader_right:
            tallies["reader wrong or unread"].add(*marks, cpu)
            if marks[1] is True:
                rescued.append(f"{scan.number}: reader {reader.number!r}, rapidocr {rapid_text!r}")
    for label, tally in tallies.items():
        print(tally.line(label))
    for line in rescued:
        print(f"    rapidocr right where the reader was not: {line}")
    return tallies


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--cards", type=int, default=80, help="scans planned per set (degraded ones are read)")
    parser.add_argument("--sets", default="hard,holdout")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    testkit.setup()  # one OpenMP thread, as an OCR worker runs, before the first engine loads
    rapid = RapidOcrEngine()
    tess = TesserocrEngine()
    warm = Image.new("L", (300, 60), 255)
    tess.read(warm)
    rapid.read(warm)
    load = os.getloadavg()
    print(f"OCR engines bench: {os.cpu_count()} CPUs, OMP_THREAD_LIMIT={os.environ.get('OMP_THREAD_LIMIT')}, "
          f"rapidocr onnxruntime session threads {rapid.threads()}; load average {load[0]:.2f} {load[1]:.2f} "
          f"{load[2]:.2f}")
    worlds = Worlds()
    total = {"all": Tally(), "reader wrong or unread": Tally()}
    for name in [s.strip() for s in args.sets.split(",") if s.strip()]:
        for label, tally in run_set(name, worlds, args.cards, args.seed, tess, rapid).items():
            total[label].crops += tally.crops
            for key in total[label].right:
                total[label].right[key] += tally.right[key]
            for key in total[label].wrong:
                total[label].wrong[key] += tally.wrong[key]
            for key in total[label].cpu:
                total[label].cpu[key] += tally.cpu[key]
    print("\n== all sets")
    for label, tally in total.items():
        print(tally.line(label))
    load = os.getloadavg()
    print(f"\nload average at the end {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
