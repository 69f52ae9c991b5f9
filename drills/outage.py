"""Database outage: Postgres lost under the pipeline, then back; and one OCR worker's lock session killed.

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

Each part gets a `testkit.live.Home` of its own (an embedded Postgres that only it uses).
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import re
import threading
import time
from pathlib import Path
from typing import Any

import psutil
import psycopg2

from drills import verdict
from stage_e_dagster.db.core.engine import get_engine
from stage_e_dagster.db.reporting.invariants import duplicate_votes
from stage_e_dagster.db.slots.holders import list_slot_holders
from stage_e_dagster.host import owner_process
from testkit import live
from testkit.corpus import demo_corpus_cli
from testkit.live import Dev, Home, wait_for
from testkit.sql import rows

WORKER_PID = re.compile(r"pid=(\d+)")
SLOTS = 2
SAMPLE_SECONDS = 0.05
STOP_BOUND_SECONDS = 30.0  # the killed worker must be gone by then, and before its batch ran out of cards


def _scalar(home: Home, sql: str) -> Any:
    """`home.scalar(sql)`, or None when the (loaded) server does not answer in time: a poll tries again."""
    try:
        return home.scalar(sql)
    except psycopg2.OperationalError:
        return None


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
    counters = run_stage_c(get_engine(url), ids, holder, settings)
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
        me = os.getpid()  # the rival holds its slot from this process, which lives on after it lets go
        while not self.stopping.is_set():
            holding = set()
            for holder in list_slot_holders(self.url):
                if match := WORKER_PID.search(holder.application_name or ""):
                    holding.add(int(match.group(1)))
                    self.held_by.setdefault(int(match.group(1)), holder.application_name or "")
                    self.backend_of.setdefault(int(match.group(1)), holder.pid)
            alive = {pid for pid in self.held_by if (pid in holding if pid == me else _alive(pid))}
            self.samples.append((time.monotonic(), alive))
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
    demo_corpus_cli(home, cards, printings=60)
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
        wait_for(lambda: len([p for p in sampler.holders("drill-a") if _alive(p)]) == SLOTS
                 or not batch.is_alive(), 120, "the batch to hold both slots", poll=SAMPLE_SECONDS)
        assert batch.is_alive(), (f"the batch ended (exit code {batch.exitcode}, {rows(url, done)[0][0]} cards "
                                  f"evidenced) before its workers held both slots")
        rival.start()  # it waits for a slot
        deadline = time.monotonic() + 180
        while rows(url, done)[0][0] < 1 and time.monotonic() < deadline:  # kill early: the batch must have work left
            time.sleep(0.05)
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
        # The freed slot is free at once: the rival or the batch's own replacement worker, whichever polls first,
        # takes it (the replacement then holds it until the batch ends).
        wait_for(lambda: took or len(sampler.holders("drill-a")) > SLOTS, 30,
                 "the freed slot to be taken by the rival or a replacement worker")
        release.set()  # the slot comes back to the batch
        batch.join(timeout=300)
    finally:
        release.set()
        if batch.is_alive():
            batch.kill()
        sampler.stopping.set()
        sampler.join(timeout=10)
        if rival.ident is not None:
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


_TICKS = ("{ repositoriesOrError { ... on RepositoryConnection { nodes { schedules { name scheduleState {"
          " ticks(limit: 50) { status timestamp } } } sensors { name sensorState { ticks(limit: 50)"
          " { status timestamp } } } } } } }")
_RUNS = ('{ runsOrError(filter: {pipelineName: "micro_batch"}) { ... on Runs { results { runId status '
         'startTime endTime } } } }')


def _ticks_after(dev: Dev, since: float) -> dict[str, int]:
    """Ticks (any status but FAILURE) of each sensor and schedule after `since` (epoch seconds)."""
    data = dev.graphql(_TICKS) or {}
    counts: dict[str, int] = {}
    for repo in data.get("repositoriesOrError", {}).get("nodes", []):
        for kind, state in (("schedules", "scheduleState"), ("sensors", "sensorState")):
            for item in repo.get(kind, []):
                ticks = (item.get(state) or {}).get("ticks") or []
                counts[item["name"]] = sum(1 for t in ticks if t["timestamp"] > since and t["status"] != "FAILURE")
    return counts


def _run_processes(owners: list[str | None]) -> dict[int, str]:
    """The processes running these batches now: each ledger row's `owner` process (`host.process_owner`: a streamed
    batch is a claim inside a draining run's process) and everything under it, such as OCR workers: pid -> command
    line. A process whose pid was reused since it took the batch is left out."""
    found = {}
    for proc in filter(None, map(owner_process, owners)):
        try:
            for one in [proc, *proc.children(recursive=True)]:
                found[one.pid] = " ".join(one.cmdline())[:160]
        except psutil.Error:
            continue
    return found


def postgres_restart(home: Home, cards: int, batch: int, figures: dict[str, Any], down_seconds: float = 20.0,
                     end_bound_seconds: float = 180.0) -> None:
    """Stop Postgres under `stage-e dev` with runs in flight, then start it again (see the module docstring)."""
    demo_corpus_cli(home, cards, printings=60)
    home.env.update({"STAGE_E_STREAMING": "on", "STAGE_E_BATCH_SIZE": str(batch), "STAGE_E_OCR_MAX_SLOTS": "1",
                     "STAGE_E_STREAM_INTERVAL_SECONDS": "5", "STAGE_E_SWEEP_CRON": "* * * * *",
                     "STAGE_E_HOST_LOAD_CEILING": "100", "STAGE_E_RECLAIM_AFTER_SECONDS": "45"})
    dev = Dev(home)
    try:
        dev.wait_ready()

        def in_flight_now() -> tuple[list[str], dict[int, str]] | None:
            """The running batches and their live processes, once evidence is stored and one is found alive (a
            fast batch can end between two looks: then look again)."""
            if (_scalar(home, "SELECT count(*) FROM image_evidence") or 0) < 1:
                return None
            running = rows(home.url, "SELECT run_id, owner FROM dispatch_ledger WHERE status = 'running'")
            ids = [run for run, _ in running]
            found = _run_processes([owner for _, owner in running])
            return (ids, found) if found else None

        in_flight, running = wait_for(in_flight_now, 300, "a batch in flight with evidence stored and its process "
                                      "alive", every=dev.record, poll=0.1)
        figures["runs_in_flight"] = len(in_flight)
        figures["evidence_at_stop"] = home.scalar("SELECT count(*) FROM image_evidence")
        home.server.stop()
        stopped = time.monotonic()
        while time.monotonic() - stopped < end_bound_seconds and any(_alive(pid) for pid in running):
            dev.record()
            time.sleep(0.5)
        ended = time.monotonic() - stopped
        figures["runs_end_s"] = round(ended, 1)
        left = [line for pid, line in running.items() if _alive(pid)]
        figures["run_processes"] = len(running)
        assert running, "found no process of the runs in flight"
        assert not left, f"run processes still alive {end_bound_seconds:.0f} s after Postgres stopped: {left}"
        time.sleep(down_seconds)
        assert dev.proc.poll() is None, "stage-e dev itself died while Postgres was down"
        home.server.start()
        restarted = time.monotonic()
        back = time.time()
        wait_for(lambda: _scalar(home, "SELECT count(*) FROM card_work") == 0
                 and _scalar(home, "SELECT count(*) FROM dispatch_ledger WHERE status = 'running'") == 0,
                 600, "every card processed after Postgres came back", every=dev.record)
        figures["recover_s"] = round(time.monotonic() - restarted, 1)
        wait_for(lambda: all(r["status"] in ("SUCCESS", "FAILURE", "CANCELED")
                             for r in (dev.graphql(_RUNS) or {"runsOrError": {"results": [{"status": "?"}]}})
                             ["runsOrError"]["results"]), 180, "Dagster to end every run", every=dev.record)
        runs = {r["runId"]: r["status"] for r in dev.graphql(_RUNS)["runsOrError"]["results"]}
        ticks = wait_for(lambda: (t := _ticks_after(dev, back)).get("card_stream") and t.get("backstop_sweep") and t,
                         120, "the stream sensor and the sweep schedule to tick again", every=dev.record)
        figures["ticks_after"] = {k: v for k, v in ticks.items() if k in ("card_stream", "backstop_sweep")}
    finally:
        dev.stop()
    url = home.url
    ledger = {run: (status, reason or "") for run, status, reason in
              rows(url, "SELECT run_id, status, failure_reason FROM dispatch_ledger")}
    figures["ledger_failed"] = sum(1 for run in in_flight if ledger[run][0] == "failed")
    for run in in_flight:  # recorded once the database was back, with a reason, and Dagster ended the run
        assert ledger[run][0] == "failed" and ledger[run][1].strip(), (run, ledger[run])
        assert runs.get(run) == "FAILURE", f"run {run} is {runs.get(run)} in Dagster"
    figures["reasons"] = sorted({ledger[run][1].splitlines()[0][:80] for run in in_flight})
    later = [run for run, (status, _) in ledger.items() if run not in in_flight and status == "completed"]
    figures["runs_after"] = len(later)
    assert later, "no batch completed after Postgres came back"
    assert ticks.get("card_stream", 0) > 0 and ticks.get("backstop_sweep", 0) > 0, f"ticks after restart {ticks}"
    per_card = rows(url, "SELECT c.id, count(e.id) FROM card c LEFT JOIN image_evidence e ON e.card_id = c.id "
                         "GROUP BY c.id HAVING count(e.id) <> 1")
    assert not per_card, f"cards without exactly one evidence row: {per_card[:5]}"
    with get_engine(url).connect() as conn:
        duplicates = duplicate_votes(conn)
    assert duplicates.count == 0, duplicates.sample
    # No partial vote group: every calculator voted or abstained on every card (nothing left in the work queue).
    assert rows(url, "SELECT count(*) FROM card_work")[0][0] == 0
    assert rows(url, "SELECT count(*) FROM dispatch_ledger WHERE status = 'running'")[0][0] == 0


def run(figures: dict[str, Any] | None = None, *, lock_cards: int = 150, cards: int = 24, batch: int = 6,
        parts: str = "lock,pg") -> dict[str, Any]:
    """The parts named in `parts` (`lock`: `lock_kill` over `lock_cards` cards; `pg`: `postgres_restart` streaming
    `cards` cards in batches of `batch`), each on a throwaway home of its own; figures prefixed by the part."""
    figures = {} if figures is None else figures
    for part in parts.split(","):
        found: dict[str, Any] = {}
        try:
            with live.home() as home:
                if part == "lock":
                    lock_kill(home, lock_cards, found)
                elif part == "pg":
                    postgres_restart(home, cards, batch, found)
                else:
                    raise ValueError(f"no part {part!r}: lock, pg")
        finally:
            figures.update({f"{part}_{key}": value for key, value in found.items()})
    figures["host_load_1m"] = round(os.getloadavg()[0], 1)
    return figures


def main(argv: list[str] | None = None) -> None:
    parser = verdict.parser_for("outage", __doc__)
    parser.add_argument("--lock-cards", type=int, default=300)
    parser.add_argument("--cards", type=int, default=24)
    parser.add_argument("--batch", type=int, default=6)
    parser.add_argument("--parts", default="lock,pg", help="lock, pg or both (comma-separated)")
    verdict.drill_main("outage", run, parser, argv)
