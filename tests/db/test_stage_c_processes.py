"""Stage C's process discipline, with real processes: never more OCR workers than slots, none left after a kill."""

from __future__ import annotations

import fcntl
import json
import multiprocessing as mp
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import psutil
import pytest

from stage_e_dagster.db.core.engine import get_engine
from stage_e_dagster.db.slots.holders import list_slot_holders
from stage_e_dagster.stages.stage_c import run_stage_c
from stage_e_dagster.workers.ocr_pool import PoolSettings
from testkit.corpus import card_ids, rendered_scans
from testkit.sql import rows

pytestmark = pytest.mark.slow
WORKER_PID = re.compile(r"pid=(\d+)")
F_SETLEASE = getattr(fcntl, "F_SETLEASE", 1024)  # Linux


def _run_batch(url: str, ids: list[int], holder: str, max_slots: int, wait: float, out: str = "") -> None:
    settings = PoolSettings(workers=2, engine="tesserocr", holder=holder,
                            slots={"database_url": url, "max_slots": max_slots, "wait_seconds": wait})
    counters = run_stage_c(get_engine(url), ids, holder, settings, force=True)
    if out:
        with open(out, "w") as handle:
            json.dump(counters.as_dict(), handle)


def _watch_holders(url: str, stop: threading.Event, seen: list[list[int]]) -> None:
    while not stop.is_set():
        holders = list_slot_holders(url)
        seen.append([int(m.group(1)) for h in holders if (m := WORKER_PID.search(h.application_name or ""))])
        time.sleep(0.02)


def test_two_batches_at_once_never_exceed_the_slot_cap(db_url, tmp_path):
    rendered_scans(db_url, tmp_path, cards=6)
    ids = sorted(card_ids(db_url).values())
    seen: list[list[int]] = []
    stop = threading.Event()
    watcher = threading.Thread(target=_watch_holders, args=(db_url, stop, seen))
    watcher.start()
    ctx = mp.get_context("spawn")
    outputs = [tmp_path / f"batch-{i}.json" for i in range(2)]
    batches = [ctx.Process(target=_run_batch, args=(db_url, ids, f"batch-{i}", 1, 120.0, str(outputs[i])))
               for i in range(2)]
    try:
        for proc in batches:
            proc.start()
        for proc in batches:
            proc.join(timeout=180)
    finally:
        stop.set()
        watcher.join()
    assert [p.exitcode for p in batches] == [0, 0]
    extracted = [json.loads(out.read_text())["extracted"] for out in outputs]
    assert extracted == [6, 6], "both batches should have extracted, one after the other"
    assert max(len(s) for s in seen) == 1, "more OCR workers held slots than the cap of 1"
    holders = {pid for s in seen for pid in s}
    assert len(holders) >= 2, "each batch's worker should have held the slot in turn"


def test_killing_the_batch_process_leaves_no_ocr_worker_alive(db_url, tmp_path):
    rendered_scans(db_url, tmp_path, cards=12)
    ids = sorted(card_ids(db_url).values())
    ctx = mp.get_context("spawn")
    batch = ctx.Process(target=_run_batch, args=(db_url, ids * 1, "doomed", 2, 0.0))
    batch.start()
    deadline = time.monotonic() + 120
    workers: list[int] = []
    while time.monotonic() < deadline and not workers:
        workers = [int(m.group(1)) for h in list_slot_holders(db_url)
                   if (m := WORKER_PID.search(h.application_name or ""))]
        time.sleep(0.05)
    assert workers, "the batch never started an OCR worker"
    os.kill(batch.pid, signal.SIGKILL)
    batch.join(timeout=10)
    time.sleep(3)
    alive = [pid for pid in workers if psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE]
    assert alive == [], f"OCR workers outlived their batch: {alive}"
    assert list_slot_holders(db_url) == []


def test_a_worker_killed_mid_card_skips_that_card_and_a_replacement_finishes_the_batch(db_url, db_engine, tmp_path):
    rendered_scans(db_url, tmp_path, cards=12)
    ids = sorted(card_ids(db_url).values())
    victims: list[int] = []

    def kill_worker_after_first_card() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if rows(db_url, "SELECT count(*) FROM image_evidence")[0][0] >= 1:
                for holder in list_slot_holders(db_url):
                    if (m := WORKER_PID.search(holder.application_name or "")):
                        victims.append(int(m.group(1)))
                        os.kill(victims[-1], signal.SIGKILL)
                return
            time.sleep(0.02)

    killer = threading.Thread(target=kill_worker_after_first_card)
    killer.start()
    settings = PoolSettings(workers=1, engine="tesserocr", holder="victim",
                            slots={"database_url": db_url, "max_slots": 1, "wait_seconds": 10})
    counters = run_stage_c(db_engine, ids, "victim", settings)
    killer.join()
    assert len(victims) == 1
    assert dict(counters.skipped) == {"worker-crashed": 1} and counters.extracted == 11
    assert rows(db_url, "SELECT skip_reason FROM card_scan_log") == [("worker-crashed",)]
    assert list_slot_holders(db_url) == []


@contextmanager
def _hang_on(root, identifiers: list[str]) -> Iterator[None]:
    """Hold a write lease on each file: another process's open of it blocks until the lease is broken (45 s by
    default), like a read from a stalled network share. The kernel signals the holder (SIGIO) and waits."""
    previous = signal.signal(signal.SIGIO, signal.SIG_IGN)
    held = []
    try:
        for identifier in identifiers:
            fd = os.open(root / "scans" / identifier, os.O_RDWR)
            held.append(fd)
            fcntl.fcntl(fd, F_SETLEASE, fcntl.F_WRLCK)
        yield
    finally:
        for fd in held:
            os.close(fd)
        signal.signal(signal.SIGIO, previous)


def test_a_card_that_hangs_is_abandoned_and_a_replacement_finishes_the_batch(db_url, db_engine, tmp_path):
    rendered_scans(db_url, tmp_path, cards=5)
    ids = card_ids(db_url)
    settings = PoolSettings(workers=1, engine="tesserocr", holder="slow", task_timeout_seconds=1.0,
                            slots={"database_url": db_url, "max_slots": 1, "wait_seconds": 10})
    with _hang_on(tmp_path, [min(ids, key=ids.get)]):
        counters = run_stage_c(db_engine, sorted(ids.values()), "slow", settings)
    assert dict(counters.skipped) == {"extraction-timeout": 1} and counters.extracted == 4
    assert list_slot_holders(db_url) == []


def test_a_batch_gives_up_after_its_replacements_and_fails(db_url, db_engine, tmp_path):
    from stage_e_dagster.stages.stage_c import StageCIncomplete

    rendered_scans(db_url, tmp_path, cards=5)
    ids = card_ids(db_url)
    settings = PoolSettings(workers=1, engine="tesserocr", holder="slow", task_timeout_seconds=1.0,
                            max_replacements=2, slots={"database_url": db_url, "max_slots": 1, "wait_seconds": 10})
    with _hang_on(tmp_path, sorted(ids, key=ids.get)[:3]), pytest.raises(StageCIncomplete,
                                                                          match="gave up after 2 replacements"):
        run_stage_c(db_engine, sorted(ids.values()), "slow", settings)
    assert rows(db_url, "SELECT skip_reason, count(*) FROM card_scan_log GROUP BY 1") == [("extraction-timeout", 3)]
    assert rows(db_url, "SELECT count(*) FROM image_evidence") == [(0,)]
    assert list_slot_holders(db_url) == []


_OMP_PROBE = """
import json, os, sys
from pathlib import Path

from stage_e_dagster.db.core.engine import get_engine
from stage_e_dagster.stages.stage_c import run_stage_c
from stage_e_dagster.workers.ocr_pool import PoolSettings

url, ids = sys.argv[1], [int(i) for i in sys.argv[2:]]
before = os.environ.get("OMP_THREAD_LIMIT")
seen = {}


def look(pids):
    for pid in pids:
        try:
            raw = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            continue
        env = dict(item.split("=", 1) for item in raw.decode().split("\\0") if "=" in item)
        seen.setdefault(pid, env.get("OMP_THREAD_LIMIT"))


settings = PoolSettings(workers=1, engine="tesserocr", holder="omp", slots={"database_url": url})
counters = run_stage_c(get_engine(url), ids, "omp", settings, force=True, on_tick=look)
print(json.dumps({"before": before, "extracted": counters.extracted, "workers": list(seen.values())}))
"""


def test_ocr_workers_run_with_one_openmp_thread(db_url, tmp_path):
    """Stage C sets the OCR thread limit for its workers itself: the batch runs in a fresh interpreter whose
    environment has no OMP_THREAD_LIMIT (whatever the Makefile, the suite or an earlier test's forkserver had), so
    its forkserver and workers start here, and each worker's environment must still say 1."""
    rendered_scans(db_url, tmp_path, cards=2)
    ids = sorted(card_ids(db_url).values())
    env = {k: v for k, v in os.environ.items() if k != "OMP_THREAD_LIMIT"}
    done = subprocess.run([sys.executable, "-c", _OMP_PROBE, db_url, *map(str, ids)], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["before"] is None and report["extracted"] == 2
    assert report["workers"], "no worker was seen"
    assert set(report["workers"]) == {"1"}, report["workers"]
