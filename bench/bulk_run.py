"""End to end against the naive baseline: `stage-e run --mode bulk` with one OCR slot over scans the demo renderer
does not draw, beside a naive read of the same files measured in the same run.

The bulk run is the real thing: ingested cards, the `micro_batch` job executed in process batch after batch,
Stage C on one slot-holding worker with the catalogue, Stage D, Stage E, ledger and Dagster run records (an
embedded Postgres under a temp home). The naive baseline reads each file, decodes it in full, crops the bottom-left
corner and makes one plain Tesseract read, in this process (also shown with the project's faster decode); it runs
once before and once after the bulk run, and the mean is the figure, so a shared host's load drift weighs on both
sides. Prints figures, where the bulk run's time went, and the ratio; asserts nothing.

Wall time flatters a pipeline of several processes on a loaded host (it gets more of the CPUs than one naive
thread), so CPU time is shown beside it: for the bulk run, that of this process, its OCR workers (children of the
forkserver) and the Postgres server during the run; for the naive read, this process's.
`--fresh-workers` starts the OCR workers anew for every batch (what bulk runs did before they kept them), to
measure that lever; `--no-sets` imports no sets file, so the reader does not know the sets' printed totals.
Usage: python bench/bulk_run.py [--cards N (500)] [--profile unseen|hard|demo] [--batch-size N (the default, 250)]
       [--fresh-workers] [--no-sets]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import time
from pathlib import Path

import psutil
from PIL import Image

from stage_e_dagster.demo.hard import HardScan, plan_scans
from stage_e_dagster.domain.evidence.load import load_scan
from stage_e_dagster.domain.evidence.model import EvidenceSkip
from stage_e_dagster.domain.evidence.ocr import make_engine
from testkit.corpus import ingest, load_catalogue, write_catalogue
from testkit.server import process_home

PRINTINGS, SEED = 2000, 5


def tree_cpu_seconds(pids: list[int | None]) -> float:
    """CPU seconds of these processes and all their descendants, including children they have already reaped."""
    total = 0.0
    for pid in pids:
        if pid is None:
            continue
        try:
            root = psutil.Process(pid)
            procs = [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            continue
        for proc in procs:
            try:
                t = proc.cpu_times()
            except psutil.NoSuchProcess:
                continue
            total += t.user + t.system + t.children_user + t.children_system
    return total


def own_cpu_seconds() -> float:
    """CPU seconds of this process's threads."""
    t = psutil.Process().cpu_times()
    return t.user + t.system


def children_cpu_seconds() -> float:
    """CPU seconds of this process's descendants, live and reaped (the forkserver and the OCR workers it forked)."""
    t = psutil.Process().cpu_times()
    return t.children_user + t.children_system + tree_cpu_seconds([c.pid for c in psutil.Process().children()])


def naive_ms_per_card(paths: list[Path], fast_decode: bool = False, cpu: list[float] | None = None) -> float:
    """Read, decode, crop the collector corner, one plain read: wall ms per card (CPU ms per card appended to
    `cpu`). The naive decode is Pillow's full decode; `fast_decode` uses the project's loader instead (JPEG draft
    decode to a working size)."""
    engine = make_engine("tesserocr")
    started, cpu_started = time.perf_counter(), time.process_time()
    for path in paths:
        data = path.read_bytes()
        if fast_decode:
            loaded = load_scan(data)
            assert not isinstance(loaded, EvidenceSkip)
            img = loaded.image
        else:
            img = Image.open(io.BytesIO(data)).convert("RGB")
        engine.read(img.crop((0, round(img.height * 0.86), round(img.width * 0.45), img.height)).convert("L"))
    if cpu is not None:
        cpu.append(1000 * (time.process_time() - cpu_started) / len(paths))
    return 1000 * (time.perf_counter() - started) / len(paths)


def prepare(root: Path, cards: int, profile: str) -> list[Path]:
    """The catalogue (with symbols and printed sizes) and `cards` scans of `profile` under `root`."""
    catalog = write_catalogue(root, PRINTINGS, SEED)
    scans = root / "scans"
    scans.mkdir()
    paths = []
    for index, scan in enumerate(plan_scans(catalog, cards, profile, seed=SEED)):
        path = scans / f"{_front(scan)} ({index}).jpg"
        path.write_bytes(scan.jpeg())
        paths.append(path)
    return paths


def _front(scan: HardScan) -> str:
    return str(scan.card["name"]).split(" // ")[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=500)
    parser.add_argument("--profile", default="unseen")
    parser.add_argument("--batch-size", type=int, default=None, help="default: STAGE_E_BATCH_SIZE's default")
    parser.add_argument("--fresh-workers", action="store_true", help="new OCR workers for every batch")
    parser.add_argument("--no-sets", action="store_true", help="import no sets file: printed totals unknown")
    args = parser.parse_args()
    from dagster import DagsterInstance

    from stage_e_dagster import bulk
    from stage_e_dagster.bulk import run_backlog
    from stage_e_dagster.db.core.engine import get_engine
    from stage_e_dagster.db.core.migrate import upgrade
    from stage_e_dagster.db.runs import ledger
    from stage_e_dagster.settings import Settings

    if args.fresh_workers:
        bulk.keep_workers = lambda holder: contextlib.nullcontext()
    # The home's environment holds one OpenMP thread per OCR process, the naive reads in this process included.
    with process_home("se-b-", STAGE_E_OCR_MAX_SLOTS="1") as root:
        print(f"rendering {args.cards} '{args.profile}' scans ...", flush=True)
        paths = prepare(root, args.cards, args.profile)
        url = os.environ["STAGE_E_DATABASE_URL"]
        upgrade(url)
        engine = get_engine(url)
        load_catalogue(engine, root, sets=not args.no_sets)
        ingest(engine, root / "scans", "bench")
        postmaster = int((root / "pg" / "postmaster.pid").read_text().split()[0])
        naive_cpu: list[float] = []
        naive_before, fast_before = naive_ms_per_card(paths, cpu=naive_cpu), naive_ms_per_card(paths, fast_decode=True)
        parts = {"this process": own_cpu_seconds, "its children (OCR workers, forkserver)": children_cpu_seconds,
                 "Postgres": lambda: tree_cpu_seconds([postmaster])}
        loads = [os.getloadavg()[0]]
        started, cpu_started = time.perf_counter(), {k: f() for k, f in parts.items()}
        with DagsterInstance.get() as instance:
            summary = run_backlog(instance, engine, batch_size=args.batch_size or Settings.batch_size)
        bulk = 1000 * (time.perf_counter() - started) / args.cards
        cpu_parts = {k: 1000 * (f() - cpu_started[k]) / args.cards for k, f in parts.items()}
        bulk_cpu = sum(cpu_parts.values())
        loads.append(os.getloadavg()[0])
        naive_after, fast_after = naive_ms_per_card(paths, cpu=naive_cpu), naive_ms_per_card(paths, fast_decode=True)
        loads.append(os.getloadavg()[0])
        fast = (fast_before + fast_after) / 2
        stage_c = stage_d = 0.0
        with engine.connect() as conn:
            recent = ledger.recent(conn, 1000)
        for row in recent:
            stage_c += float(row.counters.get("stage_c", {}).get("elapsed_seconds") or 0)
            stage_d += float(row.counters.get("stage_d", {}).get("elapsed_s") or 0)
        naive = (naive_before + naive_after) / 2
        naive_cpu_ms = sum(naive_cpu) / len(naive_cpu)
        print(f"bulk run: {summary.line()}")
        print(f"{'':28s}{'ms/card':>10s}{'cards/s':>10s}{'CPU ms/card':>13s}")
        print(f"{'stage-e run, 1 OCR slot':28s}{bulk:10.1f}{1000 / bulk:10.2f}{bulk_cpu:13.1f}")
        print(f"{'naive baseline':28s}{naive:10.1f}{1000 / naive:10.2f}{naive_cpu_ms:13.1f}   (wall before "
              f"{naive_before:.1f}, after {naive_after:.1f})")
        print(f"{'naive with the fast decode':28s}{fast:10.1f}{1000 / fast:10.2f}")
        per = 1000 / args.cards
        print("  CPU ms/card of the bulk run: " + ", ".join(f"{k} {v:.1f}" for k, v in cpu_parts.items())
              )
        print(f"  of which Stage C {stage_c * per:.1f} ms/card, Stage D {stage_d * per:.1f} ms/card, the rest "
              f"(run launch, resources, events, Stage E) {bulk - (stage_c + stage_d) * per:.1f} ms/card")
        verdict = "faster" if bulk < min(naive, fast) else "not faster"
        print(f"bulk / naive: {bulk / naive:.2f} wall, {bulk_cpu / naive_cpu_ms:.2f} CPU; bulk / naive with the fast "
              f"decode: {bulk / fast:.2f} wall (the bulk run is {verdict} per card than the plain reads); "
              f"OCR workers {'started per batch' if args.fresh_workers else 'kept'}; load "
              f"average {' / '.join(f'{x:.1f}' for x in loads)} (before / after the bulk run / at the end) on "
              f"{os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
