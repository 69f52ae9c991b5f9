"""Drill 4, database outage: Postgres lost under the pipeline, then back; and one OCR worker's lock session killed.

`lock_kill`: two Stage C batches share a cap of two OCR slots (the second one's workers wait for a slot). One
slot-holding worker of the first batch has its lock session ended by `pg_terminate_backend` from a separate
connection, which frees its slot to the second batch at once. That worker must stop OCR (it exits with
`EXIT_SLOT_LOST`) while its batch still has work, its cards go back in line, and a replacement worker takes a
slot again. The oracle samples the database's slot holders and the worker processes: apart from the killed
worker in the moment it takes to notice, never more workers alive that held a slot than there are slots; and at
the end every card has exactly one evidence row.

`postgres_restart`: `stage-e dev` streams batches through the real job; with runs in flight the embedded Postgres
is stopped, kept down, and started again. Every run process ends within a bound while the database is down, the
runs' ledger rows are reclaimed as `failed` with a reason once it is back, the stream resumes on its own and every
card ends processed exactly once with no partial vote group. The oracle is the database's final state.

Each part gets a `drills.live.Home` of its own (an embedded Postgres that only it uses).
"""

from __future__ import annotations

import json
import multiprocessing as mp
import re
import threading
import time
from pathlib import Path
from typing import Any

import psutil
import psycopg2

from drills.live import Home, wait_for
from stage_e_dagster.db.slot_holders import list_slot_holders
from stage_e_dagster.db.urls import libpq_dsn

WORKER_PID = re.compile(r"pid=(\d+)")
SLOTS = 2
SAMPLE_SECONDS = 0.05
STOP_BOUND_SECONDS = 30.0  # the killed worker must be gone by then, and before its batch ran out of cards


def seed(home: Home, cards: int, printings: int = 60) -> None:
    """A demo catalogue and `cards` rendered scans, imported and ingested through the `stage-e` commands."""
    data = home.root / "demo"
    home.stage_e("demo", "generate", "--printings", str(printings), "--cards", str(cards), "--out", str(data),
                 "--degraded-fraction", "0", "--workers", "1")
    home.stage_e("catalog", "import", str(data / "catalog.json"), "--symbols", str(data / "symbols"))
    home.stage_e("ingest", str(data / "scans"), "--source", "demo")


def rows(url: str, sql: str, params: tuple = ()) -> list[tuple]:
    conn = psycopg2.connect(libpq_dsn(url), connect_timeout=5)
    try:
        with conn.cursor() as cur:
            cur.execute(sql, params)
            return cur.fetchall()
    finally:
        conn.close()


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _batch(url: str, ids: list[int], holder: str, out: str) -> None:
    """One Stage C batch in a process of its own (as a run's step process is): two workers, waiting for slots."""
    from stage_e_dagster.stages.stage_c import run_stage_c
    from stage_e_dagster.workers.ocr_pool import PoolSettings

    settings = PoolSettings(workers=SLOTS, engine="tesserocr", holder=holder,
                            slots={"database_url": url, "max_slots": SLOTS, "wait_seconds": 300.0})
    counters = run_stage_c(url, ids, holder, settings)
    Path(out).write_text(json.dumps(counters.as_dict()))


class _Sampler(threading.Thread):
    """Every SAMPLE_SECONDS: the slot holders in the database, and which workers that ever held a slot are alive."""

    def __init__(self, url: str) -> None:
        super().__init__(daemon=True)
        self.url = url
        self.stopping = threading.Event()
        self.held_by: dict[int, str] = {}  # worker pid -> its lock session's application_name
        self.backend_of: dict[int, int] = {}  # worker pid -> its lock session's backend pid
        self.samples: list[tuple[float, set[int]]] = []  # (time, alive workers that held a slot)

    def run(self) -> None:
        while not self.stopping.is_set():
            for holder in list_slot_holders(self.url):
                if match := WORKER_PID.search(holder.application_name or ""):
                    self.held_by.setdefault(int(match.group(1)), holder.application_name or "")
                    self.backend_of.setdefault(int(match.group(1)), holder.pid)
            self.samples.append((time.monotonic(), {pid for pid in self.held_by if _alive(pid)}))
            time.sleep(SAMPLE_SECONDS)

    def holders(self, prefix: str) -> list[int]:
        return [pid for pid, name in self.held_by.items() if f" {prefix} w" in name]


def _rival(url: str, took: list[int], release: threading.Event) -> None:
    """Another process's worker in miniature: wait for a free slot, hold it until told to let go."""
    from stage_e_dagster.resources.database import AppDatabase
    from stage_e_dagster.resources.ocr_slots import OcrSlots

    slots = OcrSlots(database=AppDatabase(database_url=url), max_slots=SLOTS, wait_seconds=120.0)
    with slots.acquire(1, holder="drill-rival w0") as held:
        took.extend(held)
        release.wait(120)


def lock_kill(home: Home, cards: int, figures: dict[str, Any]) -> None:
    """Kill one working OCR worker's lock session (see the module docstring); raises AssertionError on a broken
    rule, fills `figures`."""
    seed(home, cards)
    url = home.url
    ids = [row[0] for row in rows(url, "SELECT id FROM card ORDER BY id")]
    out = home.root / "batch.json"
    sampler = _Sampler(url)
    sampler.start()
    took: list[int] = []
    release = threading.Event()
    rival = threading.Thread(target=_rival, args=(url, took, release), daemon=True)
    batch = mp.get_context("spawn").Process(target=_batch, args=(url, ids, "drill-a", str(out)))
    done = "SELECT count(*) FROM image_evidence"
    try:
        batch.start()
        wait_for(lambda: len([p for p in sampler.holders("drill-a") if _alive(p)]) == SLOTS, 120,
                 "the batch to hold both slots")
        rival.start()  # it waits for a slot
        wait_for(lambda: rows(url, done)[0][0] >= 1, 180, "the batch's first evidence")
        victim = max(p for p in sampler.holders("drill-a") if _alive(p))
        killed = rows(url, "SELECT pg_terminate_backend(%s)", (sampler.backend_of[victim],))[0][0]
        assert killed, "pg_terminate_backend found no lock session to end"
        cut = time.monotonic()
        deadline = cut + STOP_BOUND_SECONDS
        while _alive(victim) and time.monotonic() < deadline:
            time.sleep(0.02)
        stopped_after = time.monotonic() - cut
        left = len(ids) - rows(url, done)[0][0]
        figures["victim_stop_s"] = round(stopped_after, 2)
        figures["cards_left_at_stop"] = left
        assert not _alive(victim), (f"the worker whose lock session was killed still runs OCR "
                                    f"{STOP_BOUND_SECONDS:.0f} s later")
        assert batch.is_alive() and left > 0, "the killed worker went on until its batch had no cards left"
        wait_for(lambda: took, 30, "the rival to take the freed slot")
        release.set()  # the slot comes back to the batch
        batch.join(timeout=300)
    finally:
        release.set()
        if batch.is_alive():
            batch.kill()
        sampler.stopping.set()
        sampler.join(timeout=10)
        rival.join(timeout=10)
    assert batch.exitcode == 0, f"batch exit code {batch.exitcode}"
    counters = json.loads(out.read_text())
    figures["extracted"] = counters["extracted"]
    figures["workers_started"] = counters["workers"]

    over = [alive for _, alive in sampler.samples if len(alive) > SLOTS]
    figures["over_cap_s"] = round(len(over) * SAMPLE_SECONDS, 2)
    beyond = [alive for t, alive in sampler.samples if len(alive - {victim}) > SLOTS or
              (len(alive) > SLOTS and t > cut + stopped_after + 1.0)]
    assert not beyond, f"more live OCR workers than {SLOTS} slots besides the killed one's stop: {beyond[:3]}"
    figures["holders"] = len(sampler.holders("drill-a"))
    assert len(sampler.holders("drill-a")) > SLOTS, "no replacement worker took a slot for the batch"
    per_card = rows(url, "SELECT c.id, count(e.id) FROM card c LEFT JOIN image_evidence e ON e.card_id = c.id "
                         "GROUP BY c.id HAVING count(e.id) <> 1")
    assert not per_card, f"cards without exactly one evidence row: {per_card[:5]}"
    skipped = sum(counters["skipped"].values())
    assert not skipped, f"{skipped} cards skipped (the killed worker's cards must go back in line): {counters}"
