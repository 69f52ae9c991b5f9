"""The load governor in the pipeline: the real OCR pool following it with real worker processes and slots, and the
defaults' promise (govern before tripping) through the real `micro_batch` job under a controlled load signal. (Its
pure steps: `tests/unit/test_governor.py`.)"""

from __future__ import annotations

import re
import threading
import time

import pytest
from sqlalchemy import text

from stage_e_dagster import host
from stage_e_dagster.db.slots.holders import list_slot_holders
from stage_e_dagster.domain.governor import Governor
from stage_e_dagster.job_contracts import BatchSpec
from stage_e_dagster.resources.database import AppDatabase
from stage_e_dagster.resources.envelope import Envelope, HostLoad
from stage_e_dagster.resources.ocr_slots import OcrSlots
from stage_e_dagster.stages.stage_c import run_stage_c, why_workers
from stage_e_dagster.workers.ocr_pool import PoolSettings
from testkit.corpus import card_ids, rendered_scans
from testkit.jobs import micro_batch_job
from testkit.seed import ledger_row, open_trips

WORKER_PID = re.compile(r"pid=(\d+)")


def test_why_workers_names_a_batch_smaller_than_the_cap_and_a_batch_without_governor() -> None:
    gov = Governor(target=3.0, max_workers=4)
    gov.observe(1.0, now=0)
    assert why_workers(4, 2, gov) == ("only 2 card(s) to extract, so at most 2 worker(s); up to 4 OCR worker(s) "
                                      "(the slot cap), load target 3, peak load 1.00; no step")
    assert why_workers(2, 10, None) == "up to 2 OCR worker(s) (the slot cap), no governor"


@pytest.mark.slow
def test_the_pool_follows_the_governor_with_real_workers(db_url, db_engine, tmp_path) -> None:
    rendered_scans(db_url, tmp_path, cards=48)
    ids = sorted(card_ids(db_url).values())

    def read_load() -> float:
        """High load until four cards are done, then calm: steps follow progress, not the clock."""
        with db_engine.connect() as conn:
            done = conn.execute(text("SELECT count(*) FROM image_evidence")).scalar_one()
        return 9.0 if done < 4 else 0.5

    seen: list[int] = []
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            seen.append(len([h for h in list_slot_holders(db_url) if WORKER_PID.search(h.application_name or "")]))
            time.sleep(0.02)

    watcher = threading.Thread(target=watch)
    watcher.start()
    governor = Governor(target=2.0, max_workers=2, cooldown_seconds=0.2, settle_seconds=0.2)
    settings = PoolSettings(workers=2, engine="tesserocr", holder="gov",
                            slots={"database_url": db_url, "max_slots": 2, "wait_seconds": 5})
    messages: list[str] = []
    try:
        counters = run_stage_c(db_engine, ids, "gov", settings, force=True, governor=governor, read_load=read_load,
                               log=messages.append)
    finally:
        stop.set()
        watcher.join()
    assert counters.extracted + counters.copies_carried == 48 and counters.not_processed == 0
    assert [step["workers"] for step in counters.governor_steps] == [1, 2]
    assert any("load governor: 1 OCR worker(s)" in m for m in messages)
    # The first reading is already high: the batch starts with one worker, and a second joins once it is calm.
    assert counters.workers == 2 and counters.workers_cap == 2
    # The ledger counters say how many workers ran and why.
    recorded = counters.as_dict()
    assert (recorded["load_target"], recorded["load_peak"]) == (2.0, 9.0)
    assert recorded["workers_why"] == governor.explain() and "2->1 at" in recorded["workers_why"]
    assert max(seen) <= 2


# -- the defaults' promise, under a controlled load signal ------------------------------------------------------------
OWN_LOAD = 1.4
"""Runnable processes of the pipeline besides its OCR workers while it streams (drills/governor.py measured it;
docs/performance.md, "Load governor")."""
QUIET = 0.3
"""Other work on an otherwise quiet host."""


class SimulatedLoad(HostLoad):
    """The 1-minute load of a host while Stage C works, as bench/governor.py models it: the host's other work, the
    pipeline's own processes, and one per live OCR worker (each is CPU-bound). The envelope's bar and the governor
    both read it, so what the governor does with the workers moves the load the envelope judges."""

    database_url: str
    other: float

    def read(self) -> float:
        workers = [h for h in list_slot_holders(self.database_url) if WORKER_PID.search(h.application_name or "")]
        return self.other + OWN_LOAD + len(workers)


def _stream_batch(db_url, instance, tmp_path, monkeypatch, host_cpus: int, other: float):
    """One passive micro_batch run of 6 cards with the project's defaults for a `host_cpus`-core host (slot cap,
    governor target, envelope ceiling), the envelope sampling every half second, under `SimulatedLoad(other)`."""
    monkeypatch.setattr(host, "cpus", lambda: host_cpus)
    rendered_scans(db_url, tmp_path, cards=6)
    ids = tuple(sorted(card_ids(db_url).values()))
    database = AppDatabase(database_url=db_url)
    envelope = Envelope(database=database, sample_interval_seconds=0.5,
                        load_source=SimulatedLoad(database_url=db_url, other=other))
    job = micro_batch_job(db_url, envelope=envelope, ocr_slots=OcrSlots(database=database, max_slots=host_cpus - 1))
    return job.execute_in_process(run_config=BatchSpec(ids, "card-event", "passive").run_config(), instance=instance,
                                  raise_on_error=False)


@pytest.mark.slow
@pytest.mark.parametrize("host_cpus", [2, 4])
@pytest.mark.parametrize("neighbour", [False, True], ids=["sized", "neighbour"])
def test_the_defaults_never_trip_under_the_work_they_were_sized_for(db_url, instance, tmp_path, monkeypatch,
                                                                    host_cpus, neighbour):
    """The work the defaults are sized for: streaming at the slot cap on a quiet host, or beside another job that
    takes half the cores. The load stays under the ceiling (the governor sheds workers where the target is passed),
    so nothing trips and the batch completes."""
    other = QUIET + (host_cpus / 2 if neighbour else 0.0)
    result = _stream_batch(db_url, instance, tmp_path, monkeypatch, host_cpus, other)
    assert open_trips(db_url) == [], "the defaults tripped under the work they were sized for"
    assert result.success
    row = ledger_row(db_url, result.run_id)
    assert row.status == "completed" and row.counters["stage_c"]["extracted"] == 6
    stage_c = row.counters["stage_c"]
    assert stage_c["load_target"] == 1.5 * host_cpus and stage_c["load_peak"] <= 2.0 * host_cpus


@pytest.mark.slow
def test_the_defaults_trip_a_real_overload(db_url, instance, tmp_path, monkeypatch):
    """CPU hogs at twice the core count beside the pipeline: the load passes the default ceiling, the run trips."""
    result = _stream_batch(db_url, instance, tmp_path, monkeypatch, 2, QUIET + 4.0)
    assert not result.success
    (trip,) = open_trips(db_url)
    assert (trip.run_id, trip.bar, trip.ceiling) == (result.run_id, "host_load", 4.0) and trip.observed > 4.0
