"""The OCR worker pool: one process per OCR slot, each holding its own slot for as long as it lives.

A worker takes a slot on its own lock connection before doing anything; without one it exits, so the pool never
runs more OCR than the cap allows across every process on the host. Workers die with their owner: the kernel
sends SIGKILL when the parent dies (PR_SET_PDEATHSIG) and a watchdog thread also exits when the owning step
process is gone, so a killed run leaves no orphaned OCR process holding a slot. Workers are forked from a clean
forkserver that preloads this module, which keeps per-worker start-up cheap and safe in a threaded parent.
"""

from __future__ import annotations

import ctypes
import multiprocessing as mp
import os
import queue
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stage_e_dagster.domain.evidence.extract import extract_evidence
from stage_e_dagster.domain.evidence.model import Evidence, EvidenceSkip
from stage_e_dagster.domain.evidence.ocr import make_engine
from stage_e_dagster.domain.scan_files import sha256_of

POLL_SECONDS = 0.25
PR_SET_PDEATHSIG = 1


@dataclass(frozen=True)
class Task:
    """Extract `extractors` for one card from the file at `path`, expected to hash to `content_sha256`."""

    card_id: int
    path: str
    content_sha256: str
    extractors: frozenset[str]


@dataclass(frozen=True)
class TaskResult:
    card_id: int
    content_sha256: str
    outcome: Evidence | EvidenceSkip
    seconds: float


@dataclass(frozen=True)
class PoolSettings:
    """How many workers to start, which OCR engine they use, and how each one takes its slot."""

    workers: int
    engine: str
    slots: dict[str, Any]  # OcrSlots fields, rebuilt inside each worker
    holder: str  # names the lock connection, e.g. the Dagster run id
    max_in_flight: int = 0  # 0 -> two per worker


@dataclass
class PoolOutcome:
    workers_started: int = 0
    slots_held: list[int] = field(default_factory=list)
    refused: int = 0
    unprocessed: list[Task] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def throttled(self) -> bool:
        return not self.slots_held


# -- worker side ---------------------------------------------------------------------------------------------------
def _die_with(owner_pid: int) -> None:
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except OSError:
        pass

    def watchdog() -> None:
        while True:
            try:
                os.kill(owner_pid, 0)
            except ProcessLookupError:
                os._exit(3)
            except PermissionError:
                pass
            time.sleep(0.5)

    threading.Thread(target=watchdog, daemon=True, name="owner-watchdog").start()


def process_task(task: Task, engine: Any, known_set_codes: Collection[str]) -> TaskResult:
    """Read the file, check it is the bytes the card was registered with, and extract. Never raises."""
    started = time.perf_counter()
    try:
        data = Path(task.path).read_bytes()
    except FileNotFoundError:
        outcome: Evidence | EvidenceSkip = EvidenceSkip("file-missing", {"path": task.path})
    except OSError as err:
        outcome = EvidenceSkip("file-unreadable", {"error": str(err)})
    else:
        actual = sha256_of(data)
        if actual != task.content_sha256:
            outcome = EvidenceSkip("content-changed", {"expected": task.content_sha256, "actual": actual})
        else:
            try:
                outcome = extract_evidence(data, known_set_codes=known_set_codes, engine=engine,
                                           only=task.extractors)
            except Exception as err:  # noqa: BLE001 - a bug on one image must not end the batch
                outcome = EvidenceSkip("extraction-error", {"error": f"{type(err).__name__}: {err}"})
    return TaskResult(task.card_id, task.content_sha256, outcome, time.perf_counter() - started)


def _worker_main(index: int, settings: PoolSettings, known: list[str], owner_pid: int,
                 tasks: mp.Queue, results: mp.Queue) -> None:
    _die_with(owner_pid)
    os.environ["OMP_THREAD_LIMIT"] = "1"
    from stage_e_dagster.resources.ocr_slots import OcrSlots

    slots = OcrSlots(**settings.slots)
    with slots.acquire(1, holder=f"{settings.holder} w{index}") as held:
        if not held:
            results.put(("no-slot", index, None))
            return
        try:
            engine = make_engine(settings.engine)
        except Exception as err:  # noqa: BLE001 - reported to the parent, which fails the batch clearly
            results.put(("error", index, f"OCR engine {settings.engine!r} unavailable: {err}"))
            return
        results.put(("ready", index, held[0]))
        known_codes = frozenset(known)
        while (task := tasks.get()) is not None:
            results.put(("result", index, process_task(task, engine, known_codes)))


# -- parent side ---------------------------------------------------------------------------------------------------
_context: mp.context.BaseContext | None = None


def _mp_context() -> mp.context.BaseContext:
    global _context
    if _context is None:
        ctx = mp.get_context("forkserver")
        ctx.set_forkserver_preload([__name__])
        _context = ctx
    return _context


def run_pool(
    tasks: Sequence[Task],
    settings: PoolSettings,
    known_set_codes: Collection[str],
    on_result: Callable[[TaskResult], None],
    on_tick: Callable[[list[int]], None] = lambda pids: None,
) -> PoolOutcome:
    """Run `tasks` on up to `settings.workers` slot-holding workers; `on_result` is called in this process.

    `on_tick(worker_pids)` runs at least every `POLL_SECONDS` and after every result (the envelope check rate-limits
    itself); if it raises, every worker
    is killed and the exception propagates. Tasks not finished (no slot, a worker died) come back unprocessed.
    """
    outcome = PoolOutcome()
    count = min(settings.workers, len(tasks))
    if count < 1:
        outcome.unprocessed = list(tasks)
        return outcome
    ctx = _mp_context()
    result_q = ctx.Queue()
    workers = [_Worker(ctx, i, settings, sorted(known_set_codes), result_q) for i in range(count)]
    outcome.workers_started = count
    done: set[int] = set()
    try:
        _work(deque(tasks), workers, result_q, settings, on_result, on_tick, done, outcome)
        for worker in workers:
            worker.stop()
    finally:
        for worker in workers:
            worker.kill()
        result_q.close()
    outcome.unprocessed = [t for t in tasks if t.card_id not in done]
    return outcome


class _Worker:
    """One worker process with its own task queue, so the parent knows which tasks a dead worker took."""

    def __init__(self, ctx, index: int, settings: PoolSettings, known: list[str], result_q) -> None:
        self.index = index
        self.tasks = ctx.Queue()
        self.in_flight: dict[int, Task] = {}
        self.answered = False  # it said whether it holds a slot
        self.ready = False
        self.proc = ctx.Process(target=_worker_main, args=(index, settings, known, os.getpid(), self.tasks, result_q),
                                daemon=True, name=f"ocr-worker-{index}")
        self.proc.start()

    def alive(self) -> bool:
        return self.proc.is_alive()

    def send(self, task: Task) -> None:
        self.in_flight[task.card_id] = task
        self.tasks.put(task)

    def stop(self) -> None:
        """Ask a slot-holding worker to finish; a worker still waiting for a slot is killed instead."""
        if self.ready and self.alive():
            self.tasks.put(None)
            self.proc.join(timeout=10)

    def kill(self) -> None:
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join(timeout=5)
        self.tasks.close()


def _work(pending: deque[Task], workers: list[_Worker], result_q, settings: PoolSettings, on_result, on_tick,
          done: set[int], outcome: PoolOutcome) -> None:
    """Feed tasks to workers as soon as each one holds a slot; workers still waiting for a slot when the work
    runs out are killed (they hold none). Ends when every task is done or no worker is left to do it."""
    per_worker = 2
    if settings.max_in_flight:
        per_worker = max(1, settings.max_in_flight // len(workers))
    while True:
        _reap(workers, outcome)
        on_tick(_pids(workers))
        ready = [w for w in workers if w.ready and w.alive()]
        for worker in ready:
            while pending and len(worker.in_flight) < per_worker:
                worker.send(pending.popleft())
        busy = any(w.in_flight for w in ready)
        waiting = any(not w.answered and w.alive() for w in workers)
        if not busy and (not pending or not waiting):
            if pending and outcome.slots_held:
                outcome.errors.append("every OCR worker exited before the batch finished")
            return
        try:
            kind, index, payload = result_q.get(timeout=POLL_SECONDS)
        except queue.Empty:
            continue
        worker = workers[index]
        if kind == "result":
            worker.in_flight.pop(payload.card_id, None)
            done.add(payload.card_id)
            on_result(payload)
            continue
        worker.answered = True
        if kind == "ready":
            worker.ready = True
            outcome.slots_held.append(payload)
        elif kind == "no-slot":
            outcome.refused += 1
        else:
            outcome.errors.append(str(payload))


def _reap(workers: list[_Worker], outcome: PoolOutcome) -> None:
    """Notice dead workers: they have answered for good, and the cards they held are lost to this batch."""
    for worker in workers:
        if not worker.alive():
            worker.answered = True
            if worker.in_flight:
                outcome.errors.append(f"OCR worker {worker.index} died with {len(worker.in_flight)} cards")
                worker.in_flight.clear()


def _pids(workers: list[_Worker]) -> list[int]:
    return [w.proc.pid for w in workers if w.proc.pid is not None and w.alive()]
