"""Stage C benchmark: speed, OCR calls and accuracy per generated set, the naive baseline side by side, and what
the Stage D calculators make of the evidence (machine coverage and precision), for both scan renderers.

Sets (`bench/stage_c_sets.py`): from the first renderer, the one the reader is tuned on (`demo.hard` profiles),
"demo" (the demo's scans), "unseen" (fonts and layouts the demo does not use, 1040-1680 px) and "hard" (720-1680
px, 80% heavily degraded); from the second renderer, held out from tuning (`demo.holdout`), "holdout" (its own
catalogue, fonts, layout and damage; 720-1680 px, 80% heavily degraded); and "kinds", every kind of upload
(tokens, card backs, custom-art and foreign-tagged files, suffixed numbers, cards without collector numbers,
language markers), with one line per kind: number read, machine coverage and precision, and where the cards went
(the reason no machine may vote, `domain.kinds`; review; a machine hit). Scans are rendered first (in worker
processes), then every measurement runs in this one process, one worker, OMP_THREAD_LIMIT=1:

- project: `extract_evidence` with the catalogue and the card's name, as a wired worker runs it;
- project without catalogue: what a worker that passes only set codes gets (two agreeing reads needed);
- naive baseline: decode, crop the bottom-left corner, one plain Tesseract read of it;
- project, pixel thread (`--pixel-thread`): the project with geometry, hashes and quality on a second thread while
  this one reads the text, as an OCR worker runs it.

The readers take turns card by card, so a shared host's changing load weighs on each alike; wall and CPU time
are both reported. At the end the sets are printed side by side (accuracy per height and per damage bucket,
Stage D, the project's cost as a ratio to the naive read). Prints figures and ratios measured in the same run;
asserts nothing.
Usage: python bench/stage_c.py [--cards N] [--sets demo,unseen,hard,holdout,kinds] [--seed N]
       [--escalation-tessdata DIR] [--quick] [--pixel-thread] [--drop-steps deblurred-grey,...] [--no-line-filters]
Levers measured by taking them out: `--drop-steps` leaves reader ladder steps out, `--no-line-filters` keeps every
band of the collector crop as a line.
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
from pathlib import Path

from PIL import Image
from stage_c_sets import RENDERER, Scan, World, Worlds, plan_set

import testkit
from stage_e_dagster.demo.forms import SCAN_KINDS
from stage_e_dagster.demo.render import scan_size
from stage_e_dagster.domain.calculators import CalculatorOutcome, run_calculators
from stage_e_dagster.domain.calculators.join_key import JOIN_KEY_ID
from stage_e_dagster.domain.catalog import CardRef
from stage_e_dagster.domain.decisions import Vote
from stage_e_dagster.domain.evidence import collector
from stage_e_dagster.domain.evidence.extract import extract_evidence
from stage_e_dagster.domain.evidence.load import load_scan
from stage_e_dagster.domain.evidence.model import Evidence, EvidenceSkip
from stage_e_dagster.domain.evidence.ocr import TesserocrEngine, find_tessdata
from stage_e_dagster.domain.evidence.parse import normalise_collector_number
from stage_e_dagster.domain.kinds import classify, machine_ineligibility, name_and_hint

_NAIVE_NUMBER = re.compile(r"(\d{1,4})\s*/\s*\d{1,4}")


class CountingEngine:
    """An OCR engine that counts its calls (the bench's figure for OCR calls per card)."""

    def __init__(self, inner: TesserocrEngine) -> None:
        self.inner, self.name, self.calls = inner, inner.name, 0

    def read(self, image: Image.Image, psm: int = 6, whitelist: str | None = None) -> str:
        self.calls += 1
        return self.inner.read(image, psm, whitelist)


def _jpeg(scan: Scan) -> bytes:
    return scan.plan.jpeg()


def render(plans: list[Scan], workers: int = 2) -> list[bytes]:
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


Reader = Callable[[Scan, bytes, Run], None]


def project_reader(world: World, engine: CountingEngine, escalation: CountingEngine | None,
                   with_catalog: bool, pixels: Executor | None = None) -> Reader:
    """`extract_evidence` as a worker runs it, with the catalogue and the card's name or with set codes only;
    with `pixels`, the pixel analysis runs on that executor's thread beside the OCR, as in an OCR worker."""

    def read(scan: Scan, blob: bytes, run: Run) -> None:
        found = extract_evidence(blob, known_set_codes=world.known, engine=engine, escalation=escalation,
                                 catalog=world.read_catalog if with_catalog else None,
                                 name=card_name(scan) if with_catalog else None, timings=run.timings,
                                 executor=pixels)
        assert isinstance(found, Evidence)
        run.evidence.append(found)

    return read


def card_name(scan: Scan) -> str:
    """The card name a worker is given: the file name's (by the source conventions) where the scan has a path."""
    return name_and_hint(scan.path)[0] if scan.path else scan.card["name"]


def card_ref(index: int, scan: Scan) -> CardRef:
    """The scan as Stage D sees it; with a path, its kind and the reason no machine may vote, as the work rule
    derives them from the conventions and the pixel size."""
    if scan.path is None:
        return CardRef(index, scan.card["name"])
    upload = classify(scan.path)
    width, height = scan_size(scan.height, scan.plan.bleed)
    return CardRef(index, card_name(scan), name_and_hint(scan.path)[1], kind=upload.kind,
                   ineligible=machine_ineligibility(upload, width, height))


def naive_reader(engine: CountingEngine) -> Reader:
    """Decode, crop the bottom-left corner, one plain read; the number is the first "n/total" in the text."""

    def read(scan: Scan, blob: bytes, run: Run) -> None:
        loaded = load_scan(blob)
        assert not isinstance(loaded, EvidenceSkip)
        img = loaded.image
        corner = img.crop((0, round(img.height * 0.86), round(img.width * 0.45), img.height)).convert("L")
        match = _NAIVE_NUMBER.search(engine.read(corner, psm=6))
        run.numbers.append(match.group(1).lstrip("0") if match else None)

    return read


def measure(readers: dict[str, Reader], plans: list[Scan], data: list[bytes],
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


def _rate(hits: int, total: int) -> str:
    return f"{hits / total:6.1%} ({hits}/{total})" if total else "     - (0/0)"


def accuracy(plans: list[Scan], run: Run) -> dict[str, Counter[str]]:
    """Counts of right numbers, set codes and both, per group: undamaged, degraded, height bin, damage bucket."""
    by: dict[str, Counter[str]] = defaultdict(Counter)
    for scan, found in zip(plans, run.evidence, strict=True):
        right_n, right_s = found.collector_number == scan.number, found.set_code == scan.set_code
        kind = "degraded" if scan.degraded else "undamaged"
        for group in [kind, scan.height_bin, *(f"  {c}" for c in scan.damage_buckets() if c != "undamaged")]:
            by[group].update(n=1, number=int(right_n), set=int(right_s), both=int(right_n and right_s))
    return by


def group_order(groups: set[str]) -> list[str]:
    order = [g for g in ("undamaged", "degraded") if g in groups]
    order += sorted((g for g in groups if g.endswith("px")), key=lambda g: int(g.split("-")[0]))
    return order + sorted(g for g in groups if g.startswith("  "))


def report_accuracy(plans: list[Scan], run: Run) -> None:
    by = accuracy(plans, run)
    print("    accuracy        collector number          set code                  both")
    for group in group_order(set(by)):
        c = by[group]
        print(f"    {group:14s}  {_rate(c['number'], c['n']):24s}  {_rate(c['set'], c['n']):24s}  "
              f"{_rate(c['both'], c['n'])}")


def stage_d(world: World, plans: list[Scan], run: Run) -> Counter[str]:
    """Join-key, fallback and machine coverage/precision over the extracted evidence (no database)."""
    counts: Counter[str] = Counter()
    for index, (scan, found) in enumerate(zip(plans, run.evidence, strict=True)):
        card = card_ref(index, scan)
        candidates = world.by_name.get(card.name, [])
        outcome = run_calculators(card, found, candidates, world.expansions)
        machine = [v for v in outcome.votes if v.printing_id is not None or v.is_no_match]
        if scan.kind is not None:
            _count_kind(counts, scan, found, card, outcome, machine, world)
        if scan.card["id"] is None:
            continue  # a card back: no printing to be right about
        truth = world.printings[scan.card["id"]]
        join_key = [v for v in machine if v.anonymous_id == JOIN_KEY_ID]
        counts["cards"] += 1
        counts["join-key vote"] += any(v.printing_id is not None for v in join_key)
        counts["machine vote"] += any(v.printing_id is not None for v in machine)
        counts["votes"] += sum(v.printing_id is not None for v in machine)
        counts["right votes"] += sum(v.printing_id == truth.id for v in machine)
        counts["no-match votes"] += sum(v.is_no_match for v in machine)
        old = scan.set_code is None
        unique = sum(p.collector_number == truth.collector_number for p in candidates) == 1
        if old and unique:
            counts["old unique"] += 1
            counts["old unique join-key"] += any(v.printing_id == truth.id for v in join_key)
    return counts


def _count_kind(counts: Counter[str], scan: Scan, found: Evidence, card: CardRef, outcome: CalculatorOutcome,
                machine: list[Vote], world: World) -> None:
    """One scan's per-kind figures: number read right (none read, for a kind that prints none), machine vote,
    right votes, and where it went (the reason no machine may vote, review, or a machine hit)."""
    kind = scan.kind
    truth = world.printings[scan.card["id"]].id if scan.card["id"] is not None else None
    counts[f"{kind}|n"] += 1
    counts[f"{kind}|number"] += normalise_collector_number(found.collector_number) == normalise_collector_number(
        scan.number)
    counts[f"{kind}|machine"] += any(v.printing_id is not None for v in machine)
    counts[f"{kind}|votes"] += sum(v.printing_id is not None for v in machine)
    counts[f"{kind}|right"] += sum(v.printing_id is not None and v.printing_id == truth for v in machine)
    counts[f"{kind}|no-match"] += sum(v.is_no_match for v in machine)
    where = card.ineligible or ("to-review" if outcome.slow_path is not None else "machine")
    counts[f"{kind}|to:{where}"] += 1


def report_kinds(counts: Counter[str]) -> None:
    """One line per kind: number read, machine coverage and precision, and where the cards went."""
    kinds = [kind for kind in SCAN_KINDS if counts[f"{kind}|n"]]
    if not kinds:
        return
    print("    per kind        number read               machine coverage          machine precision         "
          "routed")
    for kind in kinds:
        n = counts[f"{kind}|n"]
        routed = ", ".join(f"{key.split('|to:')[1]} {value}" for key, value in sorted(counts.items())
                           if key.startswith(f"{kind}|to:"))
        print(f"    {kind:15s} {_rate(counts[f'{kind}|number'], n):24s}  {_rate(counts[f'{kind}|machine'], n):24s}  "
              f"{_rate(counts[f'{kind}|right'], counts[f'{kind}|votes']):24s}  {routed}"
              + (f"; no-match votes {counts[f'{kind}|no-match']}" if counts[f"{kind}|no-match"] else ""))


def report_stage_d(plans: list[Scan], run: Run, counts: Counter[str]) -> None:
    n = counts["cards"]
    legal = [(s, f) for s, f in zip(plans, run.evidence, strict=True) if f.legal_raw is not None]
    years = sum(f.copyright_year == int(s.card["released_at"][:4]) for s, f in legal)
    print(f"    legal line read on {_rate(len(legal), n)} of the cards (the rest settled by the catalogue); "
          f"copyright year right on {_rate(years, len(legal))} of those")
    print(f"    stage D: join-key coverage {_rate(counts['join-key vote'], n)}; machine coverage "
          f"{_rate(counts['machine vote'], n)}; machine precision {_rate(counts['right votes'], counts['votes'])}; "
          f"no-match votes {counts['no-match votes']} (every printing is in the catalogue, so each is wrong); "
          f"join-key coverage on old-style scans of unique numbers "
          f"{_rate(counts['old unique join-key'], counts['old unique'])}")
    report_kinds(counts)


def report_speed(run: Run, n: int, baseline: Run | None) -> None:
    per = " ".join(f"{key} {1000 * value / n:.1f}" for key, value in sorted(run.timings.items(),
                                                                          key=lambda kv: -kv[1]))
    ratio = ""
    if baseline is not None:
        ratio = (f"; cost {run.ms_per_card / baseline.ms_per_card:.2f}x the naive read's "
                 f"({run.cpu_ms_per_card / baseline.cpu_ms_per_card:.2f}x in CPU time)")
    p95 = 1000 * sorted(run.seconds)[int(0.95 * (len(run.seconds) - 1))]
    print(f"  {run.label}: {1000 / run.ms_per_card:5.1f} cards/s, {run.ms_per_card:5.1f} ms/card (p95 {p95:.0f}, "
          f"CPU {run.cpu_ms_per_card:.1f}), {run.calls / n:.2f} OCR calls/card{ratio}")
    if per:
        print(f"    ms/card per extractor: {per}")


@dataclass
class SetResult:
    """What one set's measurement left for the side-by-side tables."""

    name: str
    plans: list[Scan]
    baseline: Run
    project: Run
    stage_d: Counter[str]


def bench_set(name: str, worlds: Worlds, cards: int, engine: CountingEngine, escalation: CountingEngine | None,
              quick: bool, seed: int = 1, pixels: Executor | None = None) -> SetResult:
    world = worlds.of(name)
    plans = plan_set(name, worlds, cards, seed=seed)
    started = time.perf_counter()
    data = render(plans)
    degraded = sum(p.degraded for p in plans)
    print(f"\n== {name} ({RENDERER[name]} renderer): {len(plans)} scans ({degraded} degraded), rendered in "
          f"{time.perf_counter() - started:.0f}s; load average {os.getloadavg()[0]:.2f}")
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
    right = sum(n == (p.number or "").lstrip("0") for n, p in zip(baseline.numbers, plans, strict=True))
    report_speed(baseline, len(plans), None)
    print(f"    naive collector number right: {_rate(right, len(plans))}")
    counts: dict[str, Counter[str]] = {}
    for label, run in runs.items():
        report_speed(run, len(plans), baseline)
        report_accuracy(plans, run)
        counts[label] = stage_d(world, plans, run)
        report_stage_d(plans, run, counts[label])
    return SetResult(name, plans, baseline, runs["project"], counts["project"])


def side_by_side(results: list[SetResult]) -> None:
    """Each set's project figures in columns: number / set code right per group, Stage D, cost ratio."""
    tables = {r.name: accuracy(r.plans, r.project) for r in results}
    groups = group_order(set().union(*(set(t) for t in tables.values())))
    width = 27
    print("\n== side by side (project, with catalogue): collector number / set code right")
    print(f"    {'':14s}" + "".join(f"{r.name + ' (' + RENDERER[r.name] + ')':>{width}s}" for r in results))
    for group in groups:
        cells = []
        for r in results:
            c = tables[r.name].get(group)
            cells.append(f"{c['number'] / c['n']:6.1%} / {c['set'] / c['n']:6.1%} ({c['n']:4d})" if c else "-")
        print(f"    {group:14s}" + "".join(f"{cell:>{width}s}" for cell in cells))
    rows = {
        "machine coverage": lambda d: _rate(d["machine vote"], d["cards"]),
        "machine precision": lambda d: _rate(d["right votes"], d["votes"]),
        "join-key coverage": lambda d: _rate(d["join-key vote"], d["cards"]),
        "no-match votes": lambda d: str(d["no-match votes"]),
    }
    for label, cell in rows.items():
        print(f"    {label:18s}" + "".join(f"{cell(r.stage_d):>{width - 4}s}    " for r in results))
    costs = [f"{r.project.ms_per_card / r.baseline.ms_per_card:.2f}x wall, "
             f"{r.project.cpu_ms_per_card / r.baseline.cpu_ms_per_card:.2f}x CPU" for r in results]
    print(f"    {'cost vs naive':18s}" + "".join(f"{cost:>{width - 4}s}    " for cost in costs))
    print(f"    {'OCR calls/card':18s}" + "".join(
        f"{f'{r.project.calls / len(r.plans):.2f}':>{width - 4}s}    " for r in results))


def ablate(drop_steps: str, no_line_filters: bool) -> str:
    """Take levers out of the reader for this run; returns what was taken out, for the header."""
    dropped = {name for name in drop_steps.split(",") if name}
    unknown = dropped - {step.name for step in collector.LADDER}
    if unknown:
        raise SystemExit(f"unknown ladder steps {sorted(unknown)}; known: {[s.name for s in collector.LADDER]}")
    collector.LADDER = tuple(step for step in collector.LADDER if step.name not in dropped)
    if no_line_filters:
        collector.TOP_EDGE = collector.TYPE_SHARE = 0.0
    out = [f"without ladder steps {', '.join(sorted(dropped))}"] if dropped else []
    return "".join(f"; {part}" for part in out + (["without line filters"] if no_line_filters else []))


def _engine(tessdata: str | None) -> CountingEngine:
    return CountingEngine(TesserocrEngine(Path(tessdata) if tessdata else None))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--cards", type=int, default=300, help="scans per set")
    parser.add_argument("--sets", default="demo,unseen,hard,holdout,kinds")
    parser.add_argument("--seed", type=int, default=1, help="which scans each set plans")
    parser.add_argument("--tessdata", default=None, help="directory of the first-read model (default: installed)")
    parser.add_argument("--escalation-tessdata", default=None, help="model directory for the escalation reads")
    parser.add_argument("--quick", action="store_true", help="skip the run without catalogue")
    parser.add_argument("--pixel-thread", action="store_true",
                        help="also run the project with the pixel analysis on a second thread, as OCR workers do")
    parser.add_argument("--drop-steps", default="",
                        help="reader ladder steps to leave out (names in collector.LADDER), to measure a lever")
    parser.add_argument("--no-line-filters", action="store_true",
                        help="keep every band as a collector line (collector.TOP_EDGE and TYPE_SHARE off)")
    args = parser.parse_args(argv)
    testkit.setup()  # one OpenMP thread, as an OCR worker runs, before the first engine loads
    levers = ablate(args.drop_steps, args.no_line_filters)
    model = Path(args.tessdata) if args.tessdata else find_tessdata()
    size = (model / "eng.traineddata").stat().st_size / 1e6 if model else 0
    load = os.getloadavg()
    print(f"stage C bench: one worker, OMP_THREAD_LIMIT={os.environ.get('OMP_THREAD_LIMIT')}, {os.cpu_count()} CPUs, "
        f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; model {model}/eng.traineddata ({size:.1f} MB)"
        + (f"; escalation model {args.escalation_tessdata}" if args.escalation_tessdata else "") + levers)
    worlds = Worlds()
    engine = _engine(args.tessdata)
    escalation = _engine(args.escalation_tessdata) if args.escalation_tessdata else None
    results = []
    with ThreadPoolExecutor(max_workers=1) as pixels:
        for name in args.sets.split(","):
            results.append(bench_set(name, worlds, args.cards, engine, escalation, args.quick, seed=args.seed,
                                     pixels=pixels if args.pixel_thread else None))
    side_by_side(results)
    load = os.getloadavg()
    print(f"\nload average at the end {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
