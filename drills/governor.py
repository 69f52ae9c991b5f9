"""Live drill of the load governor and the envelope with the project's defaults (no ceiling, target or slot
override), as the design promises them on a 2-core host:

- `stream`: `stage-e dev` streams `cards` cards without a trip; every card gets evidence, and every batch's ledger
  counters say how many OCR workers ran and why (`workers_why`, `load_target`, `load_peak`). The promise is for a
  host doing the work it was sized for, so the drill refuses to judge (`HostBusy`) when the host's 1-minute load is
  already above the governor's target before the pipeline starts.
- `overload`: CPU hogs at twice the core count (child processes the drill starts and kills) beside `stage-e run
  --mode passive`: the envelope trips on the host-load bar, records one trip, and the run stops.

Figures: cards, seconds, cards/s, the host's load before and at its peak, and the pipeline's own load (runnable
processes of its tree, Postgres included, sampled every 0.2 s: the share of the load average that is the pipeline's,
which `bench/governor.py` takes as its `--own-load`).
"""

from __future__ import annotations

import functools
import json
import multiprocessing as mp
import os
import statistics
import subprocess
import threading
import time
from typing import Any

import psutil

from drills import verdict
from stage_e_dagster.host import cpus, default_load_ceiling, default_load_target
from testkit import live
from testkit.corpus import demo_corpus_cli
from testkit.live import STAGE_E, Dev, Home, wait_for

PRINTINGS = 150


class HostBusy(RuntimeError):
    """The host is already over the governor's target before the pipeline starts: the drill cannot judge."""


def load1() -> float:
    return os.getloadavg()[0]


class OwnLoad:
    """Samples how many processes of the pipeline (the given roots' trees and the embedded Postgres) are runnable."""

    def __init__(self, home: Home, roots: list[int]) -> None:
        self.home, self.roots, self.samples = home, roots, []
        self.peak_host = load1()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _procs(self) -> list[psutil.Process]:
        roots = list(self.roots)
        try:
            roots.append(int((self.home.server.data_dir / "postmaster.pid").read_text().splitlines()[0]))
        except (OSError, ValueError, IndexError):
            pass
        found: list[psutil.Process] = []
        for pid in roots:
            try:
                root = psutil.Process(pid)
                found += [root, *root.children(recursive=True)]
            except psutil.Error:
                continue
        return found

    def _run(self) -> None:
        while not self._stop.is_set():
            running = 0
            for proc in self._procs():
                try:
                    running += proc.status() == psutil.STATUS_RUNNING
                except psutil.Error:
                    continue
            self.samples.append(running)
            self.peak_host = max(self.peak_host, load1())
            time.sleep(0.2)

    def __enter__(self) -> OwnLoad:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def figures(self) -> dict[str, Any]:
        if not self.samples:
            return {}
        return {"own_load_mean": round(statistics.fmean(self.samples), 2),
                "own_load_p95": sorted(self.samples)[int(0.95 * (len(self.samples) - 1))],
                "host_load_peak": round(self.peak_host, 2)}


def stream(home: Home, figures: dict[str, Any], cards: int, timeout: float) -> None:
    """`stage-e dev` with the defaults streams `cards` cards: no trip, every card evidenced, workers explained."""
    target = default_load_target()
    before = load1()
    figures.update({"cpus": cpus(), "cards": cards, "load_target": target, "ceiling": default_load_ceiling(),
                    "host_load_before": round(before, 2)})
    if before > target:
        raise HostBusy(f"the host's 1-minute load is {before:.2f} before the pipeline starts, over the "
                       f"governor's target {target:g}")
    demo_corpus_cli(home, cards, PRINTINGS)
    home.env.update({"STAGE_E_STREAMING": "on", "STAGE_E_SWEEP_CRON": "0 0 1 1 *"})
    dev = Dev(home)
    try:
        dev.wait_ready()
        started = time.monotonic()
        with OwnLoad(home, [dev.proc.pid]) as own:
            try:
                wait_for(lambda: home.scalar("SELECT count(*) FROM envelope_trip") > 0
                         or home.scalar("SELECT count(*) FROM card_work WHERE stage = 'C'") == 0,
                         timeout, f"{cards} cards to get evidence", every=dev.record)
            finally:
                figures.update(own.figures())
        took = time.monotonic() - started
        figures.update({"seconds": round(took, 1), "cards_per_s": round(cards / took, 2)})
        trips = home.scalar("SELECT count(*) FROM envelope_trip")
        figures["trips"] = trips
        assert trips == 0, f"the defaults tripped: {_trip(home)}"
        assert home.scalar("SELECT count(DISTINCT card_id) FROM image_evidence") == cards
        wait_for(lambda: home.scalar("SELECT count(*) FROM dispatch_ledger WHERE status = 'running'") == 0, 120,
                 "every batch to end", every=dev.record)
        counters = [json.loads(c) if isinstance(c, str) else c for c in _column(
            home, "SELECT counters->'stage_c' FROM dispatch_ledger WHERE counters ? 'stage_c'")]
        assert counters, "no batch recorded Stage C counters"
        figures["batches"] = len(counters)
        figures["workers_peak"] = max(c["workers_peak"] for c in counters)
        for stage_c in counters:
            assert stage_c["load_target"] == target and stage_c["workers_why"], stage_c
            assert stage_c["load_peak"] is not None or stage_c["workers_why"].startswith("no card"), stage_c
    finally:
        dev.stop()


def _hog(nice: int) -> None:
    """Spin on a CPU until killed, at niceness `nice` (the load average counts a runnable process whatever its
    priority: at nice 19 a hog raises the host's load while taking almost no CPU from other work). Dies with the
    drill's process too (PR_SET_PDEATHSIG), so no hog outlives it."""
    os.nice(nice)
    try:
        import ctypes
        import signal

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)
    except OSError:
        pass
    while True:
        pass


def overload(home: Home, figures: dict[str, Any], cards: int, timeout: float, hogs: int | None = None,
             wait_over_ceiling: bool = False) -> None:
    """CPU hogs (`hogs`, default twice the core count) beside `stage-e run --mode passive`: the envelope trips on
    the host-load bar with the default ceiling, once, and the run stops before the backlog is done.

    Without `wait_over_ceiling` the hogs run at normal priority and start first, the cards are generated under them
    (the 1-minute load climbs while the drill prepares) and the run starts once they are: the hogs and the
    pipeline's own processes push the load over the ceiling, and `cards` must be more than the run finishes before
    that (on a fast host the run does a few cards a second even beside the hogs). With `wait_over_ceiling` the
    corpus is prepared first, the hogs run at nice 19 (they only need to lift the load average, not to take CPU
    from other work) and the run starts once the 1-minute load is over the ceiling, so the trip comes at the run's
    first check and a few cards prove it (the hogs must then outnumber the ceiling: the load only approaches the
    number of runnable processes). Either way the hogs are killed as soon as the trip is recorded."""
    ceiling = default_load_ceiling()
    home.env["STAGE_E_STREAMING"] = "on"  # a passive run halts at its gate while streaming is off
    figures["host_load_before"] = round(load1(), 2)
    hogs = 2 * cpus() if hogs is None else hogs
    if wait_over_ceiling:
        assert hogs > ceiling, f"{hogs} hogs cannot lift the 1-minute load over the ceiling {ceiling:g}"
        demo_corpus_cli(home, cards, PRINTINGS)
    nice = 19 if wait_over_ceiling else 0
    procs = [mp.get_context("fork").Process(target=_hog, args=(nice,), daemon=True) for _ in range(hogs)]
    for hog in procs:
        hog.start()
    started = time.time()
    figures.update({"hogs": len(procs), "hog_nice": nice, "ceiling": ceiling})
    err = ""
    try:
        if wait_over_ceiling:
            wait_for(lambda: load1() > ceiling, timeout, f"the 1-minute load to pass the ceiling {ceiling:g}")
        else:
            demo_corpus_cli(home, cards, PRINTINGS)
        figures.update({"wait_seconds" if wait_over_ceiling else "prepare_seconds": round(time.time() - started, 1),
                        "host_load_at_run": round(load1(), 2)})
        log = home.root / "overload-run.log"  # a file, not a pipe: nobody reads it while the run works
        with log.open("w") as sink:
            run = subprocess.Popen([STAGE_E, "run", "--mode", "passive", "--batch-size", "2"], env=home.env,
                                   stdout=subprocess.DEVNULL, stderr=sink, text=True)
        try:
            with OwnLoad(home, [run.pid]) as own:
                deadline = time.monotonic() + timeout
                while run.poll() is None and procs and time.monotonic() < deadline:
                    if home.scalar("SELECT count(*) FROM envelope_trip"):
                        _kill(procs)  # the trip is in: the hogs have done their part
                        procs = []
                    time.sleep(0.5)
                run.wait(timeout=max(1.0, deadline - time.monotonic()))
            figures.update(own.figures())
            err = log.read_text(errors="replace")
        finally:
            if run.poll() is None:
                run.kill()
                run.wait()
    finally:
        _kill(procs)
    figures["seconds_to_stop"] = round(time.time() - started, 1)
    trips = home.rows("SELECT bar, observed, ceiling, tripped_at FROM envelope_trip")
    figures["trips"] = len(trips)
    assert len(trips) == 1, f"expected one trip, got {trips}; stage-e run said: {err[-500:]}"
    bar, observed, trip_ceiling, tripped_at = trips[0]
    figures["seconds_to_trip"] = round(tripped_at.timestamp() - started, 1)  # from the hogs' start
    figures["observed"] = round(float(observed), 2)
    assert bar == "host_load" and float(trip_ceiling) == ceiling and float(observed) > float(trip_ceiling)
    left = home.scalar("SELECT count(*) FROM card_work WHERE stage = 'C'")
    figures["cards_left"] = left
    assert left > 0, "the run processed every card although the envelope tripped"
    assert home.scalar("SELECT count(*) FROM dispatch_ledger WHERE status = 'running'") == 0


def _kill(procs: list[mp.Process]) -> None:
    for hog in procs:
        hog.kill()
    for hog in procs:
        hog.join(timeout=10)


def _trip(home: Home) -> list[tuple]:
    return home.rows("SELECT bar, observed, ceiling FROM envelope_trip")


def _column(home: Home, sql: str) -> list[Any]:
    return [row[0] for row in home.rows(sql)]


def run(figures: dict[str, Any] | None = None, *, cards: int = 300, overload_cards: int = 400,
        timeout: float = 600, overload_timeout: float = 300, parts: str = "stream,overload", hogs: int | None = None,
        wait_over_ceiling: bool = False) -> dict[str, Any]:
    """The parts named in `parts`, each on a throwaway home of its own, each judged on its own; figures prefixed by
    the part. Raises AssertionError naming every part that failed. `hogs` and `wait_over_ceiling`: see
    `overload`."""
    figures = {} if figures is None else figures
    failures = []
    loaded = functools.partial(overload, hogs=hogs, wait_over_ceiling=wait_over_ceiling)
    plan = {"stream": (stream, cards, timeout), "overload": (loaded, overload_cards, overload_timeout)}
    for part in parts.split(","):
        drill, size, limit = plan[part]
        found: dict[str, Any] = {}
        try:
            with live.home() as home:
                drill(home, found, size, limit)
        except Exception as err:  # noqa: BLE001 - each part is judged on its own; both are reported
            failures.append(f"{part}: {type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}")
        finally:
            figures.update({f"{part}_{key}": value for key, value in found.items()})
    if failures:
        raise AssertionError(" | ".join(failures))
    return figures


def main(argv: list[str] | None = None) -> None:
    parser = verdict.parser_for("governor", __doc__)
    parser.add_argument("--cards", type=int, default=300, help="cards the `stream` part streams")
    parser.add_argument("--overload-cards", type=int, default=400)
    parser.add_argument("--parts", default="stream,overload", help="stream, overload or both (comma-separated)")
    parser.add_argument("--hogs", type=int, default=None, help="CPU hogs of the `overload` part; default 2 x CPUs")
    parser.add_argument("--wait-over-ceiling", action="store_true",
                        help="prepare the corpus, then start hogs at nice 19 and the `overload` run only once the "
                             "1-minute load is over the ceiling")
    verdict.drill_main("governor", run, parser, argv)
