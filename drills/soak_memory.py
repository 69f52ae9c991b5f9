"""What the soak drill measures to see whether anything grows with the work done: the OCR workers' peak memory
(`WorkerMemory`, sampled from `/proc` all along), and at each quiet point `stage-e dev`'s process tree (process
count, resident memory) and the Postgres server's client connections (`quiet_sample`, judged by `check_flat`).
"""

from __future__ import annotations

import statistics
import threading
import time
from pathlib import Path
from typing import Any

import psutil

from testkit.live import Dev, Home
from testkit.sql import scalar

MB = 1024 * 1024
GROWTH_LIMIT = 1.5
"""A sampled memory figure may end at most this many times where it started (Python processes warm up)."""
CONNECTION_SLACK = 3
"""Postgres connections may end at most this many above where they started (a sensor tick's own connections)."""
SETTLE_SECONDS = 30
"""How long a quiet point's figures may take to come back down to the first quiet point's."""


def tree(dev: Dev) -> list[psutil.Process]:
    """`stage-e dev`'s process and every descendant now alive."""
    try:
        root = psutil.Process(dev.proc.pid)
        return [root, *root.children(recursive=True)]
    except psutil.Error:
        return []


class WorkerMemory:
    """The peak resident memory (the kernel's high-water mark, `VmHWM`) of every OCR worker (a child of a
    multiprocessing forkserver) under the current `stage-e dev`. A draining run keeps its workers from claim to
    claim and replaces them after an idle grace, so growth shows two ways: across workers, their peaks in order of
    birth; within one worker that served the whole soak, its high-water mark halfway through its life against its
    last. The forkservers are looked for once a second; their children are read every tenth of a second from `/proc`
    (cheap, however busy the host), each keeping its high-water marks as seen. A worker seen fewer than
    `MIN_SAMPLES` times may have been caught only while starting, so it is not judged; no judged worker is no
    measurement, and fails the drill."""

    MIN_SAMPLES = 3

    def __init__(self) -> None:
        self.dev: Dev | None = None
        self.peaks: dict[int, tuple[float, float, int]] = {}  # pid -> (first seen, peak MB, samples)
        self.marks: dict[int, list[tuple[float, float]]] = {}  # pid -> (when, high-water mark) as it rose, and last
        self._forkservers: list[int] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _find_forkservers(self) -> None:
        dev = self.dev
        found = []
        for proc in tree(dev) if dev is not None else []:
            try:
                if "forkserver" in " ".join(proc.cmdline()):
                    found.append(proc.pid)
            except psutil.Error:
                continue
        self._forkservers = found

    def _run(self) -> None:
        looked = 0.0
        while not self._stop.wait(0.1):
            if time.monotonic() - looked > 1.0:
                self._find_forkservers()
                looked = time.monotonic()
            for server in self._forkservers:
                for pid in _children(server):
                    peak = _peak_mb(pid)
                    if peak is None:
                        continue
                    first, seen, samples = self.peaks.get(pid, (time.monotonic(), 0.0, 0))
                    self.peaks[pid] = (first, max(seen, peak), samples + 1)
                    marks = self.marks.setdefault(pid, [])
                    if len(marks) >= 2 and marks[-1][1] == marks[-2][1] == peak:
                        marks[-1] = (time.monotonic(), peak)  # keep the last sighting, not every flat sample
                    else:
                        marks.append((time.monotonic(), peak))

    def stop(self) -> dict[str, Any]:
        self._stop.set()
        self._thread.join(timeout=5)
        judged = [(pid, peak) for pid, (_, peak, samples) in sorted(self.peaks.items(), key=lambda item: item[1])
                  if samples >= self.MIN_SAMPLES]
        ordered = [peak for _, peak in judged]
        shown: dict[str, Any] = {"workers_seen": len(self.peaks), "workers_judged": len(ordered)}
        if not ordered:
            return shown
        if len(ordered) >= 2:
            tenth = max(1, len(ordered) // 10)
            early, late = statistics.median(ordered[:tenth]), statistics.median(ordered[-tenth:])
        else:  # one worker served it all: its high-water mark halfway through its life against its last
            marks = self.marks[judged[0][0]]
            middle = (marks[0][0] + marks[-1][0]) / 2
            early, late = max(peak for when, peak in marks if when <= middle), marks[-1][1]
        return {**shown, "worker_rss_early_mb": round(early), "worker_rss_late_mb": round(late),
                "worker_rss_max_mb": round(max(ordered)), "worker_rss_growth": round(late / early, 2)}


def _children(pid: int) -> list[int]:
    """The direct children of `pid`, from `/proc` (no scan of every process)."""
    try:
        return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except (OSError, ValueError):
        return []


def _peak_mb(pid: int) -> float | None:
    """The process's peak resident memory so far (`VmHWM`), in MB; None once it is gone."""
    try:
        line = next(line for line in Path(f"/proc/{pid}/status").read_text().splitlines() if line.startswith("VmHWM:"))
    except (OSError, StopIteration):
        return None
    return int(line.split()[1]) / 1024


def quiet_sample(home: Home, dev: Dev, baseline: tuple[int, float, int] | None = None) -> tuple[int, float, int]:
    """(processes, resident MB) of the dev tree and the server's client connections (this one excluded), each the
    least of at least three readings a second apart, so a sensor tick caught in the act does not count. Given the
    first quiet point's sample, readings go on for up to `SETTLE_SECONDS` while any figure is above it: a run's
    processes still exiting pass, a leaked process or connection stays and is caught."""
    readings: list[tuple[int, float, int]] = []
    deadline = time.monotonic() + SETTLE_SECONDS
    while True:
        procs = tree(dev)
        rss = 0.0
        for proc in procs:
            try:
                rss += proc.memory_info().rss / MB
            except psutil.Error:
                continue
        conns = scalar(home, "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' "
                             "AND pid <> pg_backend_pid()")
        readings.append((len(procs), rss, conns))
        least = (min(r[0] for r in readings), min(r[1] for r in readings), min(r[2] for r in readings))
        if len(readings) >= 3 and (baseline is None or time.monotonic() > deadline or _flat(baseline, least)):
            return least
        time.sleep(1)


def _flat(first: tuple[int, float, int], last: tuple[int, float, int]) -> bool:
    return last[0] <= first[0] and last[1] <= first[1] * GROWTH_LIMIT and last[2] <= first[2] + CONNECTION_SLACK


def check_flat(samples: list[tuple[int, float, int]], figures: dict[str, Any]) -> None:
    """The dev tree's processes and memory and the Postgres connections, sampled at each quiet point of the first
    half, end where they started (within `GROWTH_LIMIT` and `CONNECTION_SLACK`)."""
    (procs0, rss0, conns0), (procs1, rss1, conns1) = samples[0], samples[-1]
    figures.update(quiet_points=len(samples), dev_procs=f"{procs0}->{procs1}",
                   dev_rss_mb=f"{round(rss0)}->{round(rss1)}", pg_conns=f"{conns0}->{conns1}")
    assert procs1 <= procs0, f"stage-e dev's process tree grew from {procs0} to {procs1} processes"
    assert rss1 <= rss0 * GROWTH_LIMIT, f"stage-e dev's memory grew from {rss0:.0f} to {rss1:.0f} MB"
    assert conns1 <= conns0 + CONNECTION_SLACK, f"Postgres connections grew from {conns0} to {conns1}"
