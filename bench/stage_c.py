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

- project: `extract_evidence` with the catalogue and the card's name, as a wired worker runs it (with the rescue
  engine, `ocr_rapid`, unless `--no-rescue`);
- project without catalogue: what a worker that passes only set codes gets (two agreeing reads needed);
- naive baseline: decode, crop the bottom-left corner, one plain Tesseract read of it;
- project, pixel thread (`--pixel-thread`): the project with geometry, hashes and quality on a second thread while
  this one reads the text, as an OCR worker runs it.

The readers take turns card by card, so a shared host's changing load weighs on each alike; wall and CPU time
are both reported. At the end the sets are printed side by side (accuracy per height and per damage bucket,
Stage D, the project's cost as a ratio to the naive read). Prints figures and ratios measured in the same run;
asserts nothing.
Usage: python bench/stage_c.py [--cards N] [--sets demo,unseen,hard,renders,holdout,holdout-renders,kinds] [--seed N]
       [--escalation-tessdata DIR] [--quick] [--no-rescue] [--pixel-thread] [--drop-steps deblurred-grey,...]
       [--no-line-filters]
Levers measured by taking them out: `--drop-steps` leaves reader ladder steps out, `--no-line-filters` keeps every
band of the collector crop as a line.
The readers and their timing are in `bench/stage_c_readers.py`, the accuracy, Stage D figures and tables in
`bench/stage_c_figures.py`.
"""

from __future__ import annotations

import argparse
import os
import time
from collections import Counter
from concurrent.futures import Executor, ThreadPoolExecutor
from pathlib import Path

from stage_c_figures import SetResult, rate, report_accuracy, report_speed, report_stage_d, side_by_side, stage_d
from stage_c_readers import CountingEngine, measure, naive_reader, project_reader, render
from stage_c_sets import RENDERER, Worlds, plan_set

import testkit
from stage_e_dagster.domain.evidence import collector
from stage_e_dagster.domain.evidence.extract import extract_evidence
from stage_e_dagster.domain.evidence.ocr import TesserocrEngine, find_tessdata
from stage_e_dagster.domain.evidence.ocr_rapid import make_rescue_engine


def bench_set(name: str, worlds: Worlds, cards: int, engine: CountingEngine, escalation: CountingEngine | None,
              quick: bool, seed: int = 1, pixels: Executor | None = None,
              rescue: CountingEngine | None = None) -> SetResult:
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
               "project": project_reader(world, engine, escalation, with_catalog=True, rescue=rescue)}
    if pixels is not None:
        readers["project, pixel thread"] = project_reader(world, engine, escalation, with_catalog=True,
                                                          pixels=pixels, rescue=rescue)
    if not quick:
        readers["project without catalogue"] = project_reader(world, engine, escalation, with_catalog=False)
    engines = [engine] + [e for e in (escalation, rescue) if e is not None]
    rescues = rescue.calls if rescue is not None else 0
    runs = measure(readers, plans, data, engines)
    baseline = runs.pop("naive baseline")
    right = sum(n == (p.number or "").lstrip("0") for n, p in zip(baseline.numbers, plans, strict=True))
    if rescue is not None:
        print(f"    rescue engine ({rescue.name}) reads: {(rescue.calls - rescues) / len(plans):.2f}/card")
    report_speed(baseline, len(plans), None)
    print(f"    naive collector number right: {rate(right, len(plans))}")
    counts: dict[str, Counter[str]] = {}
    for label, run in runs.items():
        report_speed(run, len(plans), baseline)
        report_accuracy(plans, run)
        counts[label] = stage_d(world, plans, run)
        report_stage_d(plans, run, counts[label])
    return SetResult(name, plans, baseline, runs["project"], counts["project"])


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
    parser.add_argument("--sets", default="demo,unseen,hard,renders,holdout,holdout-renders,kinds")
    parser.add_argument("--seed", type=int, default=1, help="which scans each set plans")
    parser.add_argument("--tessdata", default=None, help="directory of the first-read model (default: installed)")
    parser.add_argument("--escalation-tessdata", default=None, help="model directory for the escalation reads")
    parser.add_argument("--quick", action="store_true", help="skip the run without catalogue")
    parser.add_argument("--no-rescue", action="store_true",
                        help="without the rescue engine (STAGE_E_OCR_RESCUE=none), to measure what it does")
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
        + (f"; escalation model {args.escalation_tessdata}" if args.escalation_tessdata else "")
        + ("; no rescue engine" if args.no_rescue else "; rescue engine rapidocr") + levers)
    worlds = Worlds()
    engine = _engine(args.tessdata)
    escalation = _engine(args.escalation_tessdata) if args.escalation_tessdata else None
    rescue = None if args.no_rescue else CountingEngine(make_rescue_engine("rapidocr"))
    results = []
    with ThreadPoolExecutor(max_workers=1) as pixels:
        for name in args.sets.split(","):
            results.append(bench_set(name, worlds, args.cards, engine, escalation, args.quick, seed=args.seed,
                                     pixels=pixels if args.pixel_thread else None, rescue=rescue))
    side_by_side(results)
    load = os.getloadavg()
    print(f"\nload average at the end {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
