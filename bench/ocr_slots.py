"""Benchmark of the OCR slots cap on a throwaway embedded Postgres: what a slot costs and how fast a dead one returns.

Prints acquire+release latency (fresh lock connection, try-lock, unlock, close) for a free slot and for a refusal,
and the time from SIGKILL of a holder process to the slot being acquired by another process, measured two ways:
through `OcrSlots.acquire` in a retry loop (what a worker sees) and by `pg_try_advisory_lock` polled on an open
connection (the server's own release latency). Run: `.venv/bin/python bench/ocr_slots.py [iterations] [trials]`.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import statistics
import sys
import time

import psycopg2

from stage_e_dagster.db.core.urls import libpq_dsn
from stage_e_dagster.resources.database import AppDatabase
from stage_e_dagster.resources.ocr_slots import OcrSlots
from testkit.server import throwaway_server

CTX = mp.get_context("fork")


def _slots(url: str) -> OcrSlots:
    return OcrSlots(database=AppDatabase(database_url=url), max_slots=1, scope="global")


def _percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1)))]


def _ms(values: list[float]) -> str:
    return (f"p50 {_percentile(values, 50) * 1e3:.2f} ms  p99 {_percentile(values, 99) * 1e3:.2f} ms  "
            f"max {max(values) * 1e3:.2f} ms  (n={len(values)})")


def acquire_latency(url: str, iterations: int) -> tuple[list[float], list[float]]:
    """Seconds per acquire+release: with the slot free, and with it taken (a refusal)."""
    slots = _slots(url)
    free, refused = [], []
    for _ in range(iterations):
        started = time.perf_counter()
        with slots.acquire() as held:
            assert held == [0]
        free.append(time.perf_counter() - started)
    with slots.acquire() as taken:
        assert taken == [0]
        for _ in range(iterations):
            started = time.perf_counter()
            with slots.acquire() as held:
                assert held == []
            refused.append(time.perf_counter() - started)
    return free, refused


def _hold_forever(url: str, ready: mp.Queue) -> None:
    with _slots(url).acquire(holder="bench-victim") as held:
        ready.put(held)
        time.sleep(600)


def _kill_holder(url: str) -> tuple[mp.Process, float]:
    """Start a holder, wait until it holds slot 0, SIGKILL it; returns it and the monotonic time of the kill."""
    ready = CTX.Queue()
    victim = CTX.Process(target=_hold_forever, args=(url, ready))
    victim.start()
    assert ready.get(timeout=30) == [0]
    assert victim.pid is not None
    os.kill(victim.pid, signal.SIGKILL)
    return victim, time.monotonic()


def kill_to_reacquire(url: str, trials: int) -> tuple[list[float], list[float]]:
    """Seconds from SIGKILL to the slot held elsewhere: via `acquire` retries, and via try-lock on an open session."""
    slots = _slots(url)
    via_acquire, via_poll = [], []
    for _ in range(trials):
        victim, killed = _kill_holder(url)
        while True:
            with slots.acquire() as held:
                if held:
                    via_acquire.append(time.monotonic() - killed)
                    break
        victim.join()
        conn = psycopg2.connect(libpq_dsn(url))
        conn.autocommit = True
        try:
            with conn.cursor() as cur:
                victim, killed = _kill_holder(url)
                while True:
                    cur.execute("SELECT pg_try_advisory_lock(%s, %s)", slots.lock_key(0))
                    if cur.fetchone()[0]:
                        via_poll.append(time.monotonic() - killed)
                        break
        finally:
            conn.close()
            victim.join()
    return via_acquire, via_poll


def main() -> None:
    iterations = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    trials = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    with throwaway_server("se-b-", databases=("bench",)) as server:
        url = server.url("bench")
        print(f"host: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; Unix-socket embedded Postgres")
        free, refused = acquire_latency(url, iterations)
        print(f"acquire+release, slot free:  {_ms(free)}")
        print(f"acquire+release, refused:    {_ms(refused)}")
        via_acquire, via_poll = kill_to_reacquire(url, trials)
        print(f"SIGKILL -> held elsewhere (acquire retry loop): median {statistics.median(via_acquire) * 1e3:.2f} ms  "
              f"max {max(via_acquire) * 1e3:.2f} ms  (n={trials})")
        print(f"SIGKILL -> held elsewhere (try-lock on open session): median {statistics.median(via_poll) * 1e3:.2f} ms"
              f"  max {max(via_poll) * 1e3:.2f} ms  (n={trials})")


if __name__ == "__main__":
    main()
