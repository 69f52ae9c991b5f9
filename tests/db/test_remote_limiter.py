"""The fleet-wide fetch limiter on a real Postgres: one rate across processes (each with its own connection), a
throttled response halves the shared pace once per generation and clean responses double it back, and without
Postgres a process falls back to its local share."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sqlalchemy import create_engine, pool

from stage_e_dagster.db.core.urls import normalise_url
from stage_e_dagster.db.intake.pace import read_pace
from stage_e_dagster.domain.remote import THROTTLED, PaceRules
from stage_e_dagster.remote.limiter import FleetLimiter

CHILD = [sys.executable, "-m", "testkit.remote_children", "limiter"]
ROOT = Path(__file__).resolve().parents[2]


def test_two_processes_share_one_rate(db_url):
    rate, turns = 20.0, 12
    start_at = time.time() + 3.0  # both processes ask at once, after both started
    children = [subprocess.Popen([*CHILD, normalise_url(db_url), str(rate), str(turns),
                                  str(start_at)], stdout=subprocess.PIPE, text=True, cwd=ROOT) for _ in range(2)]
    results = []
    for child in children:
        out, _ = child.communicate(timeout=120)
        assert child.returncode == 0
        results.append(json.loads(out.strip().splitlines()[-1]))
    merged = sorted((at, i) for i, r in enumerate(results) for at in r["scheduled"])
    gaps = [b[0] - a[0] for a, b in zip(merged, merged[1:], strict=False)]
    interval = (1 + 0.25) / rate  # the children's limiters use the default allowance
    assert min(gaps) >= interval - 1e-4, f"two turns {min(gaps):.4f} s apart: closer than the shared interval"
    switches = sum(1 for a, b in zip(merged, merged[1:], strict=False) if a[1] != b[1])
    assert switches >= turns // 2, "the processes asked at the same time and took turns"
    started = sorted(t for r in results for t in r["started"])
    assert started[-1] - started[0] >= (2 * turns - 1) * interval * 0.9, "24 turns at 20/s take more than a second"


def test_a_throttled_response_halves_the_shared_pace_once_and_clean_ones_restore_it(db_url, db_engine):
    rate = 10.0
    limiter = FleetLimiter(db_engine, rate, PaceRules(recover_after=3))
    step = limiter.interval
    first, second = _in_a_row(limiter)
    assert round(second.at - first.at, 4) == round(step, 4)
    limiter.report(first, THROTTLED)
    limiter.report(second, THROTTLED)  # a response to a request of the same generation: already accounted for
    with db_engine.connect() as conn:
        assert (read_pace(conn).factor, read_pace(conn).halvings) == (0.5, 1)
    third, fourth = _in_a_row(limiter)
    assert round(fourth.at - third.at, 4) == round(2 * step, 4), "half the pace: twice the interval, for every process"
    limiter.report(fourth, THROTTLED)
    with db_engine.connect() as conn:
        assert read_pace(conn).factor == 0.25
    for _ in range(3):
        limiter.report(limiter.acquire(), "fetched")
    with db_engine.connect() as conn:
        assert read_pace(conn).factor == 0.5, "a run of clean responses doubles it"
    for _ in range(3):
        limiter.report(limiter.acquire(), "gone")
    limiter.report(limiter.acquire(), "broken")  # neither clean nor throttled
    with db_engine.connect() as conn:
        pace = read_pace(conn)
    assert (pace.factor, pace.clean_streak) == (1.0, 0), "back to the configured rate, and never above it"
    a, b = _in_a_row(limiter)
    assert round(b.at - a.at, 4) == round(step, 4)


def _in_a_row(limiter: FleetLimiter) -> tuple:
    """Two turns asked for one right after the other: the second asked while the first's interval still ran, so
    the shared row queued it and the two are exactly one interval (at the pace) apart. A pair whose second request
    came late (a loaded host) is asked for again: its spacing also holds the delay."""
    for _attempt in range(10):
        first = limiter.acquire()
        asked = time.time()  # the database is on this host: one clock
        second = limiter.acquire()
        if asked < first.at + 0.5 * limiter.interval:
            return first, second
    pytest.fail("the host never asked for two turns within half an interval")


def test_a_thread_that_wakes_late_for_its_turn_gives_it_up_and_takes_the_next(db_engine):
    now = [100.0]
    oversleep = [0.4]  # the first sleep overruns (a busy host) by more than half the 0.25 s allowance; no other

    def sleep(seconds: float) -> None:
        now[0] += seconds + oversleep.pop(0) if oversleep else seconds

    # 1.1 s apart (the sleeps are not real): the few real milliseconds of each grant never let the row's turns lapse
    limiter = FleetLimiter(db_engine, rate=1.0, sleep=sleep, clock=lambda: now[0])
    first = limiter.acquire()  # the row's first turn is now: no wait, no sleep
    second = limiter.acquire()
    assert limiter.late_turns == 1
    assert round(second.at - first.at, 4) == round(2 * limiter.interval, 4), "the turn slept through was given up"
    third = limiter.acquire()
    assert round(third.at - second.at, 4) == round(limiter.interval, 4), "a punctual thread keeps its turn"


def test_without_postgres_a_process_fetches_at_its_local_share():
    unreachable = create_engine("postgresql+psycopg2://nobody@127.0.0.1:9/none?connect_timeout=2",
                                poolclass=pool.NullPool)
    waits: list[float] = []
    now = [100.0]
    limiter = FleetLimiter(unreachable, rate=8.0, fallback_share=0.25, sleep=waits.append, clock=lambda: now[0])
    turns = [limiter.acquire() for _ in range(3)]
    assert [t.shared for t in turns] == [False] * 3
    local = limiter.interval / 0.25
    assert waits == pytest.approx([local, 2 * local]), "8/s x 0.25: one fetch every half second (and the allowance)"
    limiter.report(turns[-1], THROTTLED)
    limiter.acquire()
    limiter.acquire()
    assert waits[-2:] == pytest.approx([3 * local, 5 * local]), "the local pace halves too"
