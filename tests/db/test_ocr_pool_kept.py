"""OCR workers kept across batches (`keep_workers`, what a bulk run does), with real processes and a real Postgres:
a kept worker still holds its slot between batches, serves the next batch, and stops with the block, with its
owner, or with a batch that fails."""

from __future__ import annotations

import multiprocessing as mp
import os
import re
import signal
import time
from pathlib import Path

import psutil
import pytest

from stage_e_dagster.db.core.engine import get_engine
from stage_e_dagster.db.slots.holders import list_slot_holders
from stage_e_dagster.resources.ocr_slots import OcrSlots
from stage_e_dagster.stages.stage_c import run_stage_c
from stage_e_dagster.workers.ocr_pool import PoolSettings, keep_workers
from testkit.corpus import card_ids, rendered_scans
from testkit.sql import rows

pytestmark = pytest.mark.slow
WORKER_PID = re.compile(r"pid=(\d+)")


def _settings(url: str, holder: str) -> PoolSettings:
    return PoolSettings(workers=1, engine="tesserocr", holder=holder,
                        slots={"database_url": url, "max_slots": 1, "wait_seconds": 10})


def _worker_pids(url: str) -> list[int]:
    return [int(m.group(1)) for h in list_slot_holders(url) if (m := WORKER_PID.search(h.application_name or ""))]


def _gone(pid: int) -> bool:
    return not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def _wait_gone(pid: int, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not _gone(pid):
        time.sleep(0.05)
    return _gone(pid)


def test_a_kept_worker_holds_its_slot_between_batches_serves_the_next_and_stops_with_the_block(
        db_url, db_engine, tmp_path):
    rendered_scans(db_url, tmp_path, cards=6)
    ids = sorted(card_ids(db_url).values())
    with keep_workers(holder="kept-run"):
        first = run_stage_c(db_engine, ids[:3], "b1", _settings(db_url, "b1"), force=True)
        between = list_slot_holders(db_url)
        kept = _worker_pids(db_url)
        with OcrSlots.from_worker_config({"database_url": db_url, "max_slots": 1}).acquire(1, "intruder") as held:
            assert held == [], "the kept worker's slot must still count against the cap between batches"
        second = run_stage_c(db_engine, ids[3:], "b2", _settings(db_url, "b2"), force=True)
        pids = _worker_pids(db_url)
    assert first.extracted == 3 and second.extracted == 3
    assert (first.workers, first.workers_reused) == (1, 0)
    assert (second.workers, second.workers_reused, second.slots_held) == (0, 1, 1)
    assert len(between) == 1 and "kept-run" in (between[0].application_name or "")
    assert len(kept) == 1 and pids == kept, "the second batch should have run on the worker kept from the first"
    assert _wait_gone(pids[0]), "the kept worker outlived its block"
    assert list_slot_holders(db_url) == []
    assert rows(db_url, "SELECT count(*) FROM image_evidence") == [(6,)]


def test_a_batch_that_fails_kills_its_kept_worker_and_the_next_batch_starts_a_fresh_one(db_url, db_engine, tmp_path):
    rendered_scans(db_url, tmp_path, cards=6)
    ids = sorted(card_ids(db_url).values())
    seen: list[int] = []

    def trip(pids: list[int]) -> None:
        seen.extend(pids)
        if rows(db_url, "SELECT count(*) FROM image_evidence")[0][0] >= 1:
            raise RuntimeError("envelope breach")

    with keep_workers(holder="kept-run"):
        run_stage_c(db_engine, ids[:2], "b1", _settings(db_url, "b1"), force=True)
        kept = _worker_pids(db_url)
        with pytest.raises(RuntimeError, match="envelope breach"):
            run_stage_c(db_engine, ids[2:], "b2", _settings(db_url, "b2"), force=True, on_tick=trip)
        assert kept and set(seen) == set(kept), "the failing batch should have run on the kept worker"
        assert _wait_gone(kept[0], 5.0), "a failed batch must kill its workers, kept or not"
        assert _worker_pids(db_url) == []
        third = run_stage_c(db_engine, ids[2:], "b3", _settings(db_url, "b3"))
        assert (third.workers, third.workers_reused) == (1, 0)
        assert third.extracted + third.current == 4
    assert list_slot_holders(db_url) == []


def _owner(url: str, ids: list[int], ready: str) -> None:
    with keep_workers(holder="doomed-run"):
        run_stage_c(get_engine(url), ids, "doomed", _settings(url, "doomed"), force=True)
        Path(ready).write_text("kept")
        time.sleep(120)


def test_a_kept_worker_dies_with_its_owner(db_url, tmp_path):
    rendered_scans(db_url, tmp_path, cards=2)
    ids = sorted(card_ids(db_url).values())
    ready = tmp_path / "ready"
    owner = mp.get_context("spawn").Process(target=_owner, args=(db_url, ids, str(ready)))
    owner.start()
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not ready.exists():
            time.sleep(0.05)
        assert ready.exists(), "the owner never finished its batch"
        workers = _worker_pids(db_url)
        assert len(workers) == 1, "the owner should keep its worker, holding the slot, between batches"
        os.kill(owner.pid, signal.SIGKILL)
        owner.join(timeout=10)
        assert _wait_gone(workers[0], 5.0), "a kept OCR worker outlived its owner"
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and list_slot_holders(db_url):
            time.sleep(0.05)
        assert list_slot_holders(db_url) == []
    finally:
        if owner.is_alive():
            owner.kill()
