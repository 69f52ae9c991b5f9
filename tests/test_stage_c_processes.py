"""Stage C's process discipline, with real processes: never more OCR workers than slots, none left after a kill."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import re
import signal
import threading
import time

import psutil
import pytest

from stage_e_dagster.db.slot_holders import list_slot_holders
from stage_e_dagster.workers.ocr_pool import PoolSettings
from stage_e_dagster.workers.stage_c import run_stage_c
from tests.stage_c_helpers import card_ids, seed_scans

pytestmark = pytest.mark.slow
WORKER_PID = re.compile(r"pid=(\d+)")


def _run_batch(url: str, ids: list[int], holder: str, max_slots: int, wait: float, out: str = "") -> None:
    settings = PoolSettings(workers=2, engine="tesserocr", holder=holder,
                            slots={"database_url": url, "max_slots": max_slots, "wait_seconds": wait})
    counters = run_stage_c(url, ids, holder, settings, force=True)
    if out:
        with open(out, "w") as handle:
            json.dump(counters.as_dict(), handle)


def _watch_holders(url: str, stop: threading.Event, seen: list[list[int]]) -> None:
    while not stop.is_set():
        holders = list_slot_holders(url)
        seen.append([int(m.group(1)) for h in holders if (m := WORKER_PID.search(h.application_name or ""))])
        time.sleep(0.02)


def test_two_batches_at_once_never_exceed_the_slot_cap(db_url, tmp_path):
    seed_scans(db_url, tmp_path, cards=6)
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
    seed_scans(db_url, tmp_path, cards=12)
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


def test_a_worker_killed_mid_batch_fails_the_batch_and_keeps_what_was_stored(db_url, tmp_path):
    from stage_e_dagster.workers.stage_c import StageCIncomplete
    from tests.stage_c_helpers import rows

    seed_scans(db_url, tmp_path, cards=12)
    ids = sorted(card_ids(db_url).values())

    def kill_worker_after_first_card() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if rows(db_url, "SELECT count(*) FROM image_evidence")[0][0] >= 1:
                for holder in list_slot_holders(db_url):
                    if (m := WORKER_PID.search(holder.application_name or "")):
                        os.kill(int(m.group(1)), signal.SIGKILL)
                return
            time.sleep(0.02)

    killer = threading.Thread(target=kill_worker_after_first_card)
    killer.start()
    settings = PoolSettings(workers=1, engine="tesserocr", holder="victim",
                            slots={"database_url": db_url, "max_slots": 1})
    with pytest.raises(StageCIncomplete, match="were not processed"):
        run_stage_c(db_url, ids, "victim", settings)
    killer.join()
    stored = rows(db_url, "SELECT count(*) FROM image_evidence")[0][0]
    assert 1 <= stored < 12
    assert list_slot_holders(db_url) == []
