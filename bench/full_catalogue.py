"""The catalogue at the size of Scryfall's "All Cards" file: import, what a worker carries, its start, Stage C and D.

Generates a 500,000-record All-Cards-shaped file (`demo/all_cards.py`: every layout, eleven languages, number
forms, frames, borders, promos) and a 3,000-printing catalogue drawn from its English records, imports each into a
database of its own on a throwaway embedded Postgres, and prints, with the host's load before and after:

- `stage-e catalog import` (with the sets file) run as an operator runs it: wall time and peak RSS of the importing
  process (goals: under 2 minutes, under 500 MB);
- the `ReadCatalog` a Stage C batch builds (`db.catalog.read.current_read_catalog`): build time, pickled size (what
  is sent to each worker), and what one OCR worker holds: the resident set of a real worker (forkserver, slot,
  OCR engine) once ready, less that of a worker given an empty catalogue (goal: under 50 MB);
- a worker's start: from its process start to its "ready" (slot taken, engine loaded, catalogue received);
- the second read of an unchanged catalogue (kept by its version);
- Stage C (`extract_evidence` as a worker runs it) and Stage D (candidate and set lookups plus the calculators, as
  `load_stage_d_inputs` reads them) per card, with each catalogue, on the same rendered scans of printings present
  in both, card by card in rotating order; and the name lookup (`ReadCatalog.printings_of`) per call.

Run: `.venv/bin/python bench/full_catalogue.py [--records N] [--scans N] [--quick]`.
"""

from __future__ import annotations

import argparse
import os
import pickle
import queue
import subprocess
import sys
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from stage_e_dagster.db.catalog.read import catalog_version, current_read_catalog
from stage_e_dagster.db.core.engine import get_engine
from stage_e_dagster.db.core.migrate import upgrade
from stage_e_dagster.db.judgement.stage_d_inputs import load_candidates, load_expansions
from stage_e_dagster.demo.all_cards import all_cards, plan_sets, write_sets_file
from stage_e_dagster.demo.catalog import write_catalog
from stage_e_dagster.demo.hard import plan_scans
from stage_e_dagster.domain.calculators import run_calculators
from stage_e_dagster.domain.catalog import CardRef, normalise_name
from stage_e_dagster.domain.evidence.extract import extract_evidence
from stage_e_dagster.domain.evidence.model import Evidence
from stage_e_dagster.domain.evidence.ocr import make_engine
from stage_e_dagster.domain.evidence.read_catalog import ReadCatalog
from stage_e_dagster.workers.ocr_crew import Crew
from stage_e_dagster.workers.ocr_worker import PoolSettings
from testkit.server import create_database, throwaway_server

_HWM_THEN_CLI = """
import atexit, sys
out = sys.argv[1]
def _peak():
    hwm = next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:"))
    open(out, "w").write(hwm)
atexit.register(_peak)
sys.argv = ["stage-e", *sys.argv[2:]]
from stage_e_dagster.cli import main
main()
"""


def stage_e_peak(argv: list[str], env: dict[str, str], scratch: Path) -> tuple[float, float, str]:
    """(peak RSS MB, wall s, last output line) of `stage-e ARGV` run as a child process. The peak is the child's own
    VmHWM (its exec starts a fresh address space), not `ru_maxrss`, which Linux carries across exec from the
    forking parent."""
    hwm = scratch / "hwm"
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", _HWM_THEN_CLI, str(hwm), *argv], env=env, capture_output=True,
                          text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"stage-e {' '.join(argv)} exited {done.returncode}:\n{done.stdout[-2000:]}"
                           f"{done.stderr[-2000:]}")
    last = next((line for line in reversed(done.stdout.splitlines()) if line.strip()), "")
    return int(hwm.read_text()) / 1024, seconds, last


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.1f} / {five:.1f} / {fifteen:.1f} on {os.cpu_count()} CPUs"


def sampled(cards: Iterator[dict[str, Any]], records: int, seed: int, size: int,
            sample: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """`cards`, passed on, with `size` of their English printings put in `sample` on the way: one in `step`, drawn
    by id across the whole file (so every era and kind of set is in it)."""
    english = sum(plan.english for plan in plan_sets(records, seed))
    step = max(1, int(english / size / 1.1))
    for card in cards:
        if len(sample) < size and card["lang"] == "en" and zlib.crc32(card["id"].encode()) % step == 0:
            sample.append(card)
        yield card


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def start_worker(url: str, catalog: ReadCatalog) -> tuple[float, float]:
    """(seconds from process start to ready, resident MB once ready) of one real OCR worker given `catalog`."""
    settings = PoolSettings(workers=1, engine="tesserocr", holder="bench-full-catalogue",
                            slots={"database_url": url, "max_slots": 1, "wait_seconds": 30})
    crew = Crew(settings, catalog)
    try:
        started = time.perf_counter()
        worker = crew.spawn()
        while True:
            try:
                kind, _index, detail = crew.result_q.get(timeout=180)
            except queue.Empty:
                raise RuntimeError("the worker never said it was ready") from None
            if kind == "ready":
                break
            if kind in ("no-slot", "error"):
                raise RuntimeError(f"the worker could not start: {kind} {detail}")
        seconds = time.perf_counter() - started
        return seconds, rss_mb(worker.proc.pid)
    finally:
        crew.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=500_000)
    parser.add_argument("--small", type=int, default=3_000)
    parser.add_argument("--scans", type=int, default=24)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="50,000 records and 8 scans")
    args = parser.parse_args()
    if args.quick:
        args.records, args.scans = min(args.records, 50_000), min(args.scans, 8)
    print(f"before: {load()}", flush=True)
    with throwaway_server("se-fc-") as server:
        root = server.data_dir.parent
        urls = {label: create_database(server.url("postgres"), f"cat_{label}") for label in ("full", "small")}
        for url in urls.values():
            upgrade(url)
        files = {"full": root / "all-cards.json", "small": root / "small.json"}
        sets_file = root / "sets.json"
        started = time.perf_counter()
        small_cards: list[dict[str, Any]] = []
        write_catalog(files["full"], sampled(all_cards(args.records, args.seed), args.records, args.seed, args.small,
                                             small_cards))
        write_sets_file(sets_file, args.records, args.seed)
        write_catalog(files["small"], small_cards)
        print(f"generated {args.records:,d} records ({files['full'].stat().st_size / 1e6:,.0f} MB) and "
              f"{len(small_cards):,d} printings in {time.perf_counter() - started:.0f} s", flush=True)

        imports: dict[str, tuple[float, float]] = {}
        for label in ("small", "full"):
            env = {**os.environ, "STAGE_E_DATABASE_URL": urls[label], "STAGE_E_HOME": str(root / "home")}
            peak, seconds, last = stage_e_peak(["catalog", "import", str(files[label]), "--sets", str(sets_file)],
                                               env, root)
            imports[label] = (seconds, peak)
            print(f"import {label:5s}: {seconds:7.1f} s, peak RSS {peak:6.0f} MB   {last[:100]}   ({load()})",
                  flush=True)
        env = {**os.environ, "STAGE_E_DATABASE_URL": urls["full"], "STAGE_E_HOME": str(root / "home")}
        peak_again, seconds_again, last = stage_e_peak(["catalog", "import", str(files["full"])], env, root)
        print(f"import full again (unchanged): {seconds_again:.1f} s, peak RSS {peak_again:.0f} MB   {last[:100]}",
              flush=True)

        engines = {label: get_engine(url) for label, url in urls.items()}
        catalogs: dict[str, ReadCatalog] = {}
        built: dict[str, float] = {}
        for label in ("small", "full"):
            with engines[label].connect() as conn:
                version = catalog_version(conn)
                started = time.perf_counter()
                catalogs[label] = current_read_catalog(conn)
                built[label] = time.perf_counter() - started
                started = time.perf_counter()
                kept = current_read_catalog(conn)
                again = time.perf_counter() - started
            assert kept is catalogs[label]
            names = len(catalogs[label].by_name)
            print(f"ReadCatalog {label:5s}: built in {built[label]:.2f} s, {names:,d} names, packed "
                  f"{catalogs[label].by_name.bytes_held() / 1e6:.1f} MB, pickled "
                  f"{len(pickle.dumps(catalogs[label])) / 1e6:.1f} MB; read again at version {version}: "
                  f"{again * 1000:.1f} ms", flush=True)

        start_worker(urls["small"], ReadCatalog.build([]))  # the forkserver's own start is not a worker's
        workers = {label: start_worker(urls["small"], catalog)
                   for label, catalog in (("empty", ReadCatalog.build([])), *catalogs.items())}
        for label, (seconds, resident) in workers.items():
            print(f"OCR worker, {label:5s} catalogue: ready in {seconds:.2f} s, resident {resident:.0f} MB "
                  f"(catalogue's share {resident - workers['empty'][1]:.1f} MB)", flush=True)

        scans = plan_scans(small_cards, args.scans, "demo", seed=args.seed)
        blobs = [scan.jpeg() for scan in scans]
        ocr = make_engine("tesserocr")
        stage_c: dict[str, list[float]] = {"small": [], "full": []}
        evidence: dict[str, list[Evidence]] = {"small": [], "full": []}
        labels = ["small", "full"]
        for index, (scan, blob) in enumerate(zip(scans, blobs, strict=True)):
            for label in labels[index % 2:] + labels[:index % 2]:
                catalog = catalogs[label]
                started = time.perf_counter()
                found = extract_evidence(blob, known_set_codes=catalog.set_codes, engine=ocr, catalog=catalog,
                                         name=scan.card["name"])
                stage_c[label].append(time.perf_counter() - started)
                assert isinstance(found, Evidence)
                evidence[label].append(found)
        stage_d: dict[str, float] = {}
        votes: dict[str, int] = {}
        misses: list[tuple[str, Any, Evidence, int, Any]] = []
        for label in labels:
            cards = [CardRef(index + 1, scan.card["name"]) for index, scan in enumerate(scans)]
            started = time.perf_counter()
            with engines[label].connect() as conn:
                expansions = load_expansions(conn)
                candidates = load_candidates(conn, [normalise_name(card.name) for card in cards])
            right = 0
            for card, scan, found in zip(cards, scans, evidence[label], strict=True):
                outcome = run_calculators(card, found, candidates.get(normalise_name(card.name), []), expansions)
                ids = {vote.printing_id for vote in outcome.votes if vote.printing_id is not None}
                hit = any(p.id in ids and p.scryfall_id == scan.card["id"]
                          for p in candidates.get(normalise_name(card.name), []))
                right += hit
                if not hit:
                    misses.append((label, scan, found, len(candidates.get(normalise_name(card.name), [])), outcome))
            stage_d[label] = (time.perf_counter() - started) / len(cards)
            votes[label] = right
        for label, scan, found, count, outcome in misses:
            print(f"no vote for its printing ({label}): {scan.card['name']!r} {scan.card['set']} "
                  f"{scan.card['collector_number']} (frame {scan.card['frame']}), {count} candidates, read "
                  f"{found.set_code} {found.collector_number}: {outcome.labels()}")
        lookups: dict[str, float] = {}
        for label in labels:
            names = [scan.card["name"] for scan in scans] * 200
            started = time.perf_counter()
            for name in names:
                catalogs[label].printings_of(name)
            lookups[label] = (time.perf_counter() - started) / len(names)

        ms = {label: 1000 * sum(values) / len(values) for label, values in stage_c.items()}
        print(f"\n{'':44s}{'3k':>12s}{'full':>12s}{'full / 3k':>12s}")
        rows = [
            ("printings (records)", len(small_cards), args.records, "{:,.0f}"),
            ("import wall s", imports["small"][0], imports["full"][0], "{:.1f}"),
            ("import peak RSS MB", imports["small"][1], imports["full"][1], "{:.0f}"),
            ("ReadCatalog build s", built["small"], built["full"], "{:.2f}"),
            ("ReadCatalog pickled MB", len(pickle.dumps(catalogs["small"])) / 1e6,
             len(pickle.dumps(catalogs["full"])) / 1e6, "{:.2f}"),
            ("worker resident MB (empty catalogue: "
             f"{workers['empty'][1]:.0f})", workers["small"][1], workers["full"][1], "{:.0f}"),
            ("worker start to ready s", workers["small"][0], workers["full"][0], "{:.2f}"),
            ("Stage C ms per card", ms["small"], ms["full"], "{:.0f}"),
            ("Stage D ms per card (lookups + calculators)", 1000 * stage_d["small"], 1000 * stage_d["full"],
             "{:.2f}"),
            ("name lookup us", 1e6 * lookups["small"], 1e6 * lookups["full"], "{:.1f}"),
            (f"scans voted for their printing (of {len(scans)})", votes["small"], votes["full"], "{:.0f}"),
        ]
        for label, small, full, form in rows:
            ratio = f"{full / small:.2f}" if small else "-"
            print(f"{label:44s}{form.format(small):>12s}{form.format(full):>12s}{ratio:>12s}")
        same = sum(a.collector_number == b.collector_number and a.set_code == b.set_code
                   for a, b in zip(evidence["small"], evidence["full"], strict=True))
        print(f"Stage C read the same number and set with both catalogues on {same} of {len(scans)} scans")
        print(f"goals: import < 120 s ({imports['full'][0]:.0f} s), import < 500 MB ({imports['full'][1]:.0f} MB), "
              f"worker catalogue < 50 MB ({workers['full'][1] - workers['empty'][1]:.1f} MB)")
    print(f"after: {load()}")


if __name__ == "__main__":
    main()
