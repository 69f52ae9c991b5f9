"""Orchestration overhead: cards/s through real `micro_batch` runs against the same cards through the stage runners
directly, at several batch sizes, measured side by side in one run.

Both paths start from the same state: before every pass the application database is cloned afresh from a
prepared template (catalogue imported, demo scans ingested, nothing processed), so each pass does the same work.

- **Dagster**: `bulk.run_backlog`, what `stage-e run` executes: the `micro_batch` job in process, batch after batch,
  with its resources, gates, ledger, events and run records in Postgres storage (the embedded server).
- **direct**: the same batch loop (`cards_needing_work`, same order and sizes) calling the stage runners the assets
  wrap: ledger row opened, `run_stage_c` on slot-holding OCR workers, `run_stage_d`, `run_stage_e`; the OCR workers
  are kept from batch to batch, as `run_backlog` keeps them, so the two paths differ only by Dagster.

Passes alternate (direct, Dagster, then Dagster, direct, ...), so host load drift weighs on both paths alike. The
overhead is Dagster's time over the direct time, from the summed times of all rounds at one batch size. Each pass is
also split into the time inside the stage runners (Stage C and D, from the ledger's counters) and the rest; the
rest's difference between the paths, per run, is Dagster's fixed cost per run, a steadier figure on a loaded host
than the wall-clock difference, whose noise is mostly Stage C's. Prints a table and the load average; its last line
reads `overhead at the default batch size <n>: <pct>%`. **worker ms/card** is the OCR workers' own time per card
on each path (direct/Dagster): where the two differ, the host's pace changed between the passes, which moves the
wall clock but is not Dagster's doing. Asserts nothing.
Usage: python bench/end_to_end.py [--cards N] [--sizes 25,100,250] [--rounds N] [--slots N]
"""

from __future__ import annotations

import argparse
import os
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from testkit.corpus import demo_corpus
from testkit.server import process_home, scratch_database, template_from, with_database


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=500)
    parser.add_argument("--sizes", default="25,100,250")
    parser.add_argument("--rounds", type=int, default=3, help="passes of each path per batch size")
    parser.add_argument("--slots", type=int, default=1, help="OCR slots (workers per batch) on both paths")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with process_home("se-e2e-", STAGE_E_OCR_MAX_SLOTS=str(args.slots)) as root:  # one OpenMP thread per OCR process
        bench(root, args.cards, sizes, args.rounds)


def bench(root: Path, cards: int, sizes: list[int], rounds: int) -> None:
    from dagster import DagsterInstance

    from stage_e_dagster.db.core.migrate import upgrade
    from stage_e_dagster.settings import Settings

    settings = Settings.from_env()
    template = os.environ["STAGE_E_DATABASE_URL"]
    print(f"generating and ingesting {cards} demo scans ...", flush=True)
    upgrade(template)
    demo_corpus(template, root / "demo", cards=cards, printings=400, seed=7, source="bench")
    template_from(template)

    times: dict[tuple[str, int], list[Pass]] = {}
    loads: list[float] = [os.getloadavg()[0]]
    with DagsterInstance.get() as instance:
        # Warm both paths once (imports, the OCR forkserver, Dagster's first run) so no pass pays a one-off start.
        for path in PATHS:
            one_pass(path, instance, template, min(sizes), min(cards, min(sizes)), settings)
        for size in sizes:
            for round_ in range(rounds):
                order = PATHS if round_ % 2 == 0 else tuple(reversed(PATHS))
                for path in order:
                    done = one_pass(path, instance, template, size, cards, settings)
                    times.setdefault((path, size), []).append(done)
                    loads.append(os.getloadavg()[0])
                    print(f"  batch {size:4d}  {path:7s} {cards / done.wall:7.2f} cards/s  ({done.wall:.1f} s, "
                          f"{done.wall - done.stages:.1f} s outside the stages, {done.runs} runs, "
                          f"load {loads[-1]:.1f})", flush=True)
    report(times, cards, sizes, loads, settings.batch_size)


PATHS = ("direct", "dagster")


@dataclass(frozen=True)
class Pass:
    wall: float  # seconds for the whole pass
    stages: float  # of which inside run_stage_c and run_stage_d (the ledger's counters)
    runs: int
    worker: float  # the OCR workers' own time on the cards (Stage C's worker_seconds): the host's pace


def one_pass(path: str, instance, template: str, size: int, cards: int, settings) -> Pass:
    """Process `cards` cards in batches of `size` on a fresh clone of the template."""
    with scratch_database(with_database(template, "postgres"), "e2e", template=template_from(template)) as url:
        return _one_pass(path, instance, url, template, size, cards, settings)


def _one_pass(path: str, instance, url: str, template: str, size: int, cards: int, settings) -> Pass:
    from stage_e_dagster.bulk import run_backlog
    from stage_e_dagster.db.core.engine import get_engine
    from stage_e_dagster.db.runs import ledger

    engine = get_engine(url)
    os.environ["STAGE_E_DATABASE_URL"] = url  # the job's `database` resource reads it at run start
    try:
        started = time.perf_counter()
        if path == "dagster":
            summary = run_backlog(instance, engine, limit=cards, batch_size=size)
            done = summary.statuses.get("completed", 0)
            if done != summary.runs:
                raise RuntimeError(f"Dagster pass did not complete every batch: {summary.line()}")
        else:
            direct_backlog(engine, url, cards, size, settings)
        wall = time.perf_counter() - started
        with engine.connect() as conn:
            rows = ledger.recent(conn, 10_000)
        stages = sum(float(r.counters.get("stage_c", {}).get("elapsed_seconds") or 0)
                     + float(r.counters.get("stage_d", {}).get("elapsed_s") or 0) for r in rows)
        worker = sum(float(r.counters.get("stage_c", {}).get("worker_seconds") or 0) for r in rows)
        return Pass(wall, stages, len(rows), worker)
    finally:
        os.environ["STAGE_E_DATABASE_URL"] = template


def direct_backlog(engine, url: str, limit: int, size: int, settings) -> None:
    """`run_backlog`'s loop without Dagster: the same batches through the runners the three assets wrap."""
    from stage_e_dagster.db.runs import ledger
    from stage_e_dagster.db.work.queue import cards_needing_work
    from stage_e_dagster.host import process_owner
    from stage_e_dagster.resources.database import AppDatabase
    from stage_e_dagster.resources.ocr_engine import OcrSettings
    from stage_e_dagster.resources.ocr_slots import OcrSlots
    from stage_e_dagster.stages.stage_c import run_stage_c
    from stage_e_dagster.stages.stage_d import run_stage_d
    from stage_e_dagster.stages.stage_e import run_stage_e
    from stage_e_dagster.workers.ocr_pool import PoolSettings, keep_workers

    slots = OcrSlots.from_settings(settings, AppDatabase(database_url=url))
    ocr = OcrSettings(engine=settings.ocr_engine)
    taken, watermark = 0, None
    with keep_workers(holder=f"direct-{os.getpid()}"):  # as run_backlog keeps them
        while taken < limit:
            with engine.connect() as conn:
                cards = cards_needing_work(conn, min(size, limit - taken), set(), after_id=watermark)
            if not cards:
                break
            watermark = cards[-1].id
            ids = [c.id for c in cards]
            run_id = f"direct-{uuid.uuid4().hex}"
            with engine.begin() as conn:
                ledger.open_batch(conn, run_id, "bulk", "bulk", ids, owner=process_owner())
            pool = PoolSettings(workers=slots.local_workers, engine=ocr.engine, slots=slots.worker_config(),
                                holder=run_id, task_timeout_seconds=ocr.task_timeout_seconds)
            counters = run_stage_c(engine, ids, run_id, pool)
            if counters.throttled:
                raise RuntimeError("direct pass found no free OCR slot")
            with engine.begin() as conn:
                ledger.merge_counters(conn, run_id, {"stage_c": counters.as_dict()})
            stage_d = run_stage_d(engine, ids, run_id, settings.consensus_policy)
            with engine.begin() as conn:
                ledger.merge_counters(conn, run_id, {"stage_d": stage_d})
            if not run_stage_e(engine, run_id, ids).closed:
                raise RuntimeError(f"direct batch {run_id} did not close")
            taken += len(ids)


def report(times: dict[tuple[str, int], list[Pass]], cards: int, sizes: list[int], loads: list[float],
           default_size: int) -> None:
    print(f"\n{cards} cards per pass, {len(times[('direct', sizes[0])])} passes per path and size; "
          f"load average (1 min) {min(loads):.1f}-{max(loads):.1f} over the run, {os.cpu_count()} CPUs")
    print(f"{'batch':>6s} {'direct c/s':>11s} {'Dagster c/s':>12s} {'ratio':>7s} {'overhead':>9s} "
          f"{'fixed/run':>10s} {'fixed %':>8s} {'worker ms/card':>15s}  passes (s) direct / Dagster")
    overhead_at: dict[int, float] = {}
    for size in sizes:
        direct, dagster = times[("direct", size)], times[("dagster", size)]
        wall_direct, wall_dagster = sum(p.wall for p in direct), sum(p.wall for p in dagster)
        runs = sum(p.runs for p in dagster)
        # Dagster's cost per run: the time outside the stage runners, Dagster path minus direct path.
        fixed = (sum(p.wall - p.stages for p in dagster) - sum(p.wall - p.stages for p in direct)) / runs
        overhead_at[size] = 100 * (wall_dagster - wall_direct) / wall_direct
        fixed_pct = 100 * fixed * runs / wall_direct
        worker = "/".join(f"{1000 * sum(p.worker for p in ps) / (cards * len(ps)):.1f}" for ps in (direct, dagster))
        print(f"{size:6d} {cards * len(direct) / wall_direct:11.2f} {cards * len(dagster) / wall_dagster:12.2f} "
              f"{wall_dagster / wall_direct:7.3f} {overhead_at[size]:8.1f}% {fixed:9.2f}s {fixed_pct:7.1f}% "
              f"{worker:>15s}  "
              f"{' '.join(f'{p.wall:.1f}' for p in direct)} / {' '.join(f'{p.wall:.1f}' for p in dagster)}")
    size = default_size if default_size in overhead_at else min(overhead_at, key=lambda s: abs(s - default_size))
    print(f"overhead at the default batch size {size}: {overhead_at[size]:.1f}%")


if __name__ == "__main__":
    main()
