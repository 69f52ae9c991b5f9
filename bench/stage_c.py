"""Stage C benchmark: speed, OCR calls and accuracy per generated set, the naive baseline side by side, and what
the Stage D calculators make of the evidence (machine coverage and precision).

Sets (`stage_e_dagster.demo.hard` profiles): "demo" (the demo renderer's scans), "unseen" (fonts and layouts the
demo does not use, 1040-1680 px) and "hard" (720-1680 px, 80% heavily degraded). Scans are rendered first (in
worker processes), then every measurement runs in this one process, one worker, OMP_THREAD_LIMIT=1:

- project: `extract_evidence` with the catalogue and the card's name, as a wired worker runs it;
- project without catalogue: what a worker that passes only set codes gets (two agreeing reads needed);
- naive baseline: decode, crop the bottom-left corner, one plain Tesseract read of it;
- project, pixel thread (`--pixel-thread`): the project with geometry, hashes and quality on a second thread while
  this one reads the text, as an OCR worker runs it.

The readers take turns card by card, so a shared host's changing load weighs on each alike; wall and CPU time
are both reported. Prints figures and ratios measured in the same run; asserts nothing.
Usage: python bench/stage_c.py [--cards N] [--sets demo,unseen,hard] [--escalation-tessdata DIR] [--quick]
       [--pixel-thread]
"""

from __future__ import annotations

import argparse
import os
import re
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from PIL import Image

import testkit
from stage_e_dagster.demo.catalog import generate_catalog
from stage_e_dagster.demo.hard import HardScan, plan_scans, read_catalog_of
from stage_e_dagster.demo.symbols import render_set_symbol
from stage_e_dagster.domain.calculators import run_calculators
from stage_e_dagster.domain.calculators.join_key import JOIN_KEY_ID
from stage_e_dagster.domain.catalog import CardRef, ExpansionRef, PrintingRef
from stage_e_dagster.domain.evidence.extract import extract_evidence
from stage_e_dagster.domain.evidence.hashing import symbol_phash
from stage_e_dagster.domain.evidence.load import load_scan
from stage_e_dagster.domain.evidence.model import Evidence, EvidenceSkip
from stage_e_dagster.domain.evidence.ocr import TesserocrEngine, find_tessdata
from stage_e_dagster.domain.evidence.read_catalog import ReadCatalog

PRINTINGS, CATALOG_SEED = 2000, 5
_NAIVE_NUMBER = re.compile(r"(\d{1,4})\s*/\s*\d{1,4}")


class CountingEngine:
    """An OCR engine that counts its calls (the bench's figure for OCR calls per card)."""

    def __init__(self, inner: TesserocrEngine) -> None:
        self.inner, self.name, self.calls = inner, inner.name, 0

    def read(self, image: Image.Image, psm: int = 6, whitelist: str | None = None) -> str:
        self.calls += 1
        return self.inner.read(image, psm, whitelist)


@dataclass
class World:
    """The generated catalogue as each stage sees it."""

    cards: list[dict]
    read_catalog: ReadCatalog
    known: set[str]
    printings: dict[str, PrintingRef]  # by scryfall id
    by_name: dict[str, list[PrintingRef]]
    expansions: dict[str, ExpansionRef]


def build_world() -> World:
    cards = generate_catalog(PRINTINGS, seed=CATALOG_SEED)
    printings: dict[str, PrintingRef] = {}
    by_name: dict[str, list[PrintingRef]] = defaultdict(list)
    released: dict[str, object] = {}
    for index, card in enumerate(cards, 1):
        ref = PrintingRef(index, card["id"], card["name"], card["set"], card["collector_number"],
                          border_color=card["border_color"], frame=card["frame"])
        printings[card["id"]] = ref
        by_name[card["name"]].append(ref)
        released[card["set"]] = card["released_at"]
    expansions = {code: ExpansionRef(code, date.fromisoformat(str(day)), symbol_phash(render_set_symbol(code)))
                  for code, day in released.items()}
    return World(cards, read_catalog_of(cards), set(released), printings, dict(by_name), expansions)


def _jpeg(scan: HardScan) -> bytes:
    return scan.jpeg()


def render(plans: list[HardScan], workers: int = 2) -> list[bytes]:
    with ProcessPoolExecutor(workers) as pool:
        return list(pool.map(_jpeg, plans, chunksize=8))


@dataclass
class Run:
    """One reader over one set: wall and CPU seconds per card, OCR calls, seconds per extractor, results."""

    label: str
    seconds: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    calls: int = 0
    timings: dict[str, float] = field(default_factory=dict)
    evidence: list[Evidence] = field(default_factory=list)
    numbers: list[str | None] = field(default_factory=list)

    @property
    def ms_per_card(self) -> float:
        return 1000 * sum(self.seconds) / max(1, len(self.seconds))

    @property
    def cpu_ms_per_card(self) -> float:
        return 1000 * sum(self.cpu) / max(1, len(self.cpu))


Reader = Callable[[HardScan, bytes, Run], None]


def project_reader(world: World, engine: CountingEngine, escalation: CountingEngine | None,
                   with_catalog: bool, pixels: Executor | None = None) -> Reader:
    """`extract_evidence` as a worker runs it, with the catalogue and the card's name or with set codes only;
    with `pixels`, the pixel analysis runs on that executor's thread beside the OCR, as in an OCR worker."""

    def read(scan: HardScan, blob: bytes, run: Run) -> None:
        found = extract_evidence(blob, known_set_codes=world.known, engine=engine, escalation=escalation,
                                 catalog=world.read_catalog if with_catalog else None,
                                 name=scan.card["name"] if with_catalog else None, timings=run.timings,
                                 executor=pixels)
        assert isinstance(found, Evidence)
        run.evidence.append(found)

    return read


def naive_reader(engine: CountingEngine) -> Reader:
    """Decode, crop the bottom-left corner, one plain read; the number is the first "n/total" in the text."""

    def read(scan: HardScan, blob: bytes, run: Run) -> None:
        loaded = load_scan(blob)
        assert not isinstance(loaded, EvidenceSkip)
        img = loaded.image
        corner = img.crop((0, round(img.height * 0.86), round(img.width * 0.45), img.height)).convert("L")
        match = _NAIVE_NUMBER.search(engine.read(corner, psm=6))
        run.numbers.append(match.group(1).lstrip("0") if match else None)

    return read


def measure(readers: dict[str, Reader], plans: list[HardScan], data: list[bytes],
            engines: list[CountingEngine]) -> dict[str, Run]:
    """Every reader on every card, card by card in rotating order, so that a shared host's changing load weighs
    on each reader alike; OCR calls are counted per reader."""
    runs = {label: Run(label) for label in readers}
    labels = list(readers)
    for index, (scan, blob) in enumerate(zip(plans, data, strict=True)):
        shift = index % len(labels)
        for label in labels[shift:] + labels[:shift]:
            before = sum(engine.calls for engine in engines)
            wall, cpu = time.perf_counter(), time.process_time()
            readers[label](scan, blob, runs[label])
            runs[label].seconds.append(time.perf_counter() - wall)
            runs[label].cpu.append(time.process_time() - cpu)
            runs[label].calls += sum(engine.calls for engine in engines) - before
    return runs


def expected(card: dict) -> tuple[str, str | None]:
    return card["collector_number"], card["set"] if card["frame"] == "2015" else None


def _rate(hits: int, total: int) -> str:
    return f"{hits / total:6.1%} ({hits}/{total})" if total else "     - (0/0)"


def degradation_classes(scan: HardScan) -> list[str]:
    d = scan.degradation
    if d is None:
        return ["clean"]
    blur = "blur<1.0" if d.blur_radius < 1.0 else "blur1.0-1.2" if d.blur_radius < 1.2 else "blur>=1.2"
    jpeg = "jpeg-none" if d.jpeg_quality is None else f"jpeg{d.jpeg_quality // 10 * 10}s"
    return [blur, jpeg, "rot>=1" if abs(d.rotation_deg) >= 1 else "rot<1"]


def report_accuracy(plans: list[HardScan], run: Run) -> None:
    by: dict[str, Counter[str]] = defaultdict(Counter)
    for scan, found in zip(plans, run.evidence, strict=True):
        number, code = expected(scan.card)
        right_n, right_s = found.collector_number == number, found.set_code == code
        kind = "degraded" if scan.degradation else "clean"
        groups = [kind, f"{scan.long_side}px", *(f"  {c}" for c in degradation_classes(scan))]
        for group in groups:
            by[group].update(n=1, number=int(right_n), set=int(right_s), both=int(right_n and right_s))
    order = ["clean", "degraded"] + sorted((k for k in by if k.endswith("px")), key=lambda k: int(k[:-2]))
    order += sorted(k for k in by if k.startswith("  "))
    print("    accuracy        collector number          set code                  both")
    for group in order:
        c = by[group]
        print(f"    {group:14s}  {_rate(c['number'], c['n']):24s}  {_rate(c['set'], c['n']):24s}  "
              f"{_rate(c['both'], c['n'])}")


def report_stage_d(world: World, plans: list[HardScan], run: Run) -> None:
    """Join-key, fallback and machine coverage/precision over the extracted evidence (no database)."""
    counts: Counter[str] = Counter()
    for index, (scan, found) in enumerate(zip(plans, run.evidence, strict=True)):
        truth = world.printings[scan.card["id"]]
        candidates = world.by_name[scan.card["name"]]
        outcome = run_calculators(CardRef(index, scan.card["name"]), found, candidates, world.expansions)
        machine = [v for v in outcome.votes if v.printing_id is not None or v.is_no_match]
        join_key = [v for v in machine if v.anonymous_id == JOIN_KEY_ID]
        counts["cards"] += 1
        counts["join-key vote"] += any(v.printing_id is not None for v in join_key)
        counts["machine vote"] += any(v.printing_id is not None for v in machine)
        counts["votes"] += len(machine)
        counts["right votes"] += sum(v.printing_id == truth.id for v in machine)
        counts["no-match votes"] += sum(v.is_no_match for v in machine)
        old = scan.card["frame"] != "2015"
        unique = sum(p.collector_number == truth.collector_number for p in candidates) == 1
        if old and unique:
            counts["old unique"] += 1
            counts["old unique join-key"] += any(v.printing_id == truth.id for v in join_key)
    n = counts["cards"]
    legal = [(s, f) for s, f in zip(plans, run.evidence, strict=True) if f.legal_raw is not None]
    years = sum(f.copyright_year == int(s.card["released_at"][:4]) for s, f in legal)
    print(f"    legal line read on {_rate(len(legal), n)} of the cards (the rest settled by the catalogue); "
          f"copyright year right on {_rate(years, len(legal))} of those")
    print(f"    stage D: join-key coverage {_rate(counts['join-key vote'], n)}; machine coverage "
          f"{_rate(counts['machine vote'], n)}; machine precision {_rate(counts['right votes'], counts['votes'])}; "
          f"no-match votes {counts['no-match votes']} (every printing is in the catalogue); join-key coverage on "
          f"old-style scans of unique numbers {_rate(counts['old unique join-key'], counts['old unique'])}")


def report_speed(run: Run, n: int, baseline: Run | None) -> None:
    per = " ".join(f"{key} {1000 * value / n:.1f}" for key, value in sorted(run.timings.items(),
                                                                          key=lambda kv: -kv[1]))
    ratio = ""
    if baseline is not None:
        ratio = (f"; {baseline.ms_per_card / run.ms_per_card:.2f}x the naive baseline's speed "
                 f"({baseline.cpu_ms_per_card / run.cpu_ms_per_card:.2f}x in CPU time)")
    p95 = 1000 * sorted(run.seconds)[int(0.95 * (len(run.seconds) - 1))]
    print(f"  {run.label}: {1000 / run.ms_per_card:5.1f} cards/s, {run.ms_per_card:5.1f} ms/card (p95 {p95:.0f}, "
          f"CPU {run.cpu_ms_per_card:.1f}), {run.calls / n:.2f} OCR calls/card{ratio}")
    if per:
        print(f"    ms/card per extractor: {per}")


def bench_set(name: str, world: World, cards: int, engine: CountingEngine, escalation: CountingEngine | None,
              quick: bool, seed: int = 1, pixels: Executor | None = None) -> None:
    plans = plan_scans(world.cards, cards, name, seed=seed)
    started = time.perf_counter()
    data = render(plans)
    degraded = sum(p.degradation is not None for p in plans)
    print(f"\n== {name}: {len(plans)} scans ({degraded} degraded), rendered in {time.perf_counter() - started:.0f}s")
    # Warm up (first-call costs: Tesseract's model load, font caches).
    extract_evidence(data[0], known_set_codes=world.known, engine=engine)
    readers = {"naive baseline": naive_reader(engine),
               "project": project_reader(world, engine, escalation, with_catalog=True)}
    if pixels is not None:
        readers["project, pixel thread"] = project_reader(world, engine, escalation, with_catalog=True,
                                                          pixels=pixels)
    if not quick:
        readers["project without catalogue"] = project_reader(world, engine, escalation, with_catalog=False)
    engines = [engine] + ([escalation] if escalation is not None else [])
    runs = measure(readers, plans, data, engines)
    baseline = runs.pop("naive baseline")
    right = sum(n == p.card["collector_number"].lstrip("0") for n, p in zip(baseline.numbers, plans, strict=True))
    report_speed(baseline, len(plans), None)
    print(f"    naive collector number right: {_rate(right, len(plans))}")
    for run in runs.values():
        report_speed(run, len(plans), baseline)
        report_accuracy(plans, run)
        report_stage_d(world, plans, run)


def _engine(tessdata: str | None) -> CountingEngine:
    return CountingEngine(TesserocrEngine(Path(tessdata) if tessdata else None))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--cards", type=int, default=300, help="scans per set")
    parser.add_argument("--sets", default="demo,unseen,hard")
    parser.add_argument("--tessdata", default=None, help="directory of the first-read model (default: installed)")
    parser.add_argument("--escalation-tessdata", default=None, help="model directory for the escalation reads")
    parser.add_argument("--quick", action="store_true", help="skip the run without catalogue")
    parser.add_argument("--pixel-thread", action="store_true",
                        help="also run the project with the pixel analysis on a second thread, as OCR workers do")
    args = parser.parse_args(argv)
    testkit.setup()  # one OpenMP thread, as an OCR worker runs, before the first engine loads
    model = Path(args.tessdata) if args.tessdata else find_tessdata()
    size = (model / "eng.traineddata").stat().st_size / 1e6 if model else 0
    load = os.getloadavg()
    print(f"stage C bench: one worker, OMP_THREAD_LIMIT={os.environ.get('OMP_THREAD_LIMIT')}, {os.cpu_count()} CPUs, "
        f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; model {model}/eng.traineddata ({size:.1f} MB)"
        + (f"; escalation model {args.escalation_tessdata}" if args.escalation_tessdata else ""))
    world = build_world()
    engine = _engine(args.tessdata)
    escalation = _engine(args.escalation_tessdata) if args.escalation_tessdata else None
    with ThreadPoolExecutor(max_workers=1) as pixels:
        for name in args.sets.split(","):
            bench_set(name, world, args.cards, engine, escalation, args.quick,
                      pixels=pixels if args.pixel_thread else None)
    load = os.getloadavg()
    print(f"\nload average at the end {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
