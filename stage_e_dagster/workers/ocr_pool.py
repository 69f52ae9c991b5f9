"""The OCR worker pool: up to N slot-holding worker processes, fed a bounded number of cards each.

Workers are forked from a clean forkserver that preloads the worker module, which keeps start-up cheap and safe in
a threaded parent. Each worker has its own task queue, so the parent knows which card a worker was on when it
died or hung: that card is recorded as a named skip (`worker-crashed`, `extraction-timeout`) so one poisonous
image cannot fail every batch it lands in, the worker's other cards go back in line, and a replacement worker
(which must take a slot of its own) carries on, up to `max_replacements` per batch. A worker that exits because
its lock session ended (`EXIT_SLOT_LOST`) did nothing wrong: every card it held goes back in line and a
replacement, which must take a slot again, is started outside that limit.

Inside `keep_workers()` (a bulk run wraps its batches in it) a batch's idle workers are not stopped at its end:
the next batch in this process reuses them, still holding their slots and their loaded OCR model, so a run of
many batches pays the worker start once. They stop, and release their slots, when the block ends; a batch that
fails kills its workers as before, and a killed owner takes them with it (PR_SET_PDEATHSIG and the watchdog).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

from stage_e_dagster.domain.evidence.model import EvidenceSkip
from stage_e_dagster.domain.evidence.read_catalog import ReadCatalog
from stage_e_dagster.runtime import limit_ocr_threads
from stage_e_dagster.workers.ocr_worker import EXIT_SLOT_LOST, PoolSettings, Task, TaskResult, worker_main

POLL_SECONDS = 0.25

__all__ = ["PoolOutcome", "PoolSettings", "Task", "TaskResult", "keep_workers", "run_pool"]


@dataclass
class PoolOutcome:
    workers_started: int = 0
    workers_reused: int = 0  # workers kept from the previous batch (see `keep_workers`), slots already held
    workers_peak: int = 0  # most workers holding a slot at once
    retired: int = 0  # workers asked to finish early because fewer were wanted
    slots_held: list[int] = field(default_factory=list)
    refused: int = 0
    replaced: int = 0
    slots_lost: int = 0  # workers that stopped because their lock session ended; each one replaced
    unprocessed: list[Task] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def throttled(self) -> bool:
        return not self.slots_held


_context: mp.context.BaseContext | None = None


def _mp_context() -> mp.context.BaseContext:
    """The forkserver context; the OCR thread limit is set first, so the forkserver and every worker inherit it."""
    global _context
    if _context is None:
        limit_ocr_threads()
        ctx = mp.get_context("forkserver")
        ctx.set_forkserver_preload(["stage_e_dagster.workers.ocr_worker"])
        _context = ctx
    return _context


class _Worker:
    """One worker process and the cards it holds, oldest first (the one it is working on)."""

    def __init__(self, ctx, index: int, settings: PoolSettings, catalog: ReadCatalog, result_q) -> None:
        self.index = index
        self.tasks = ctx.Queue()
        self.in_flight: dict[int, Task] = {}
        self.busy_since = 0.0  # when it started on its oldest card
        self.answered = False  # it said whether it holds a slot
        self.ready = False
        self.retiring = False  # fewer workers are wanted: it takes no new cards and stops when idle
        self.stopped = False
        self.slot: int | None = None  # the slot it holds, once ready
        self.gone = False  # given up by its pool: whatever it still sends is ignored
        self.slot_lost = False  # it exited with EXIT_SLOT_LOST and was dealt with
        self.proc = ctx.Process(target=worker_main, args=(index, settings, catalog, os.getpid(), self.tasks, result_q),
                                daemon=True, name=f"ocr-worker-{index}")
        self.proc.start()

    def alive(self) -> bool:
        return self.proc.is_alive()

    def send(self, task: Task) -> None:
        if not self.in_flight:
            self.busy_since = time.monotonic()
        self.in_flight[task.card_id] = task
        self.tasks.put(task)

    def finished(self, card_id: int) -> None:
        self.in_flight.pop(card_id, None)
        self.busy_since = time.monotonic()

    def stop(self, wait: bool = True) -> None:
        """Ask a slot-holding worker to finish (it releases its slot on the way out)."""
        if self.ready and self.alive() and not self.stopped:
            self.tasks.put(None)
            self.stopped = True
        if wait:
            self.proc.join(timeout=10)

    def active(self) -> bool:
        """Alive, not retiring, and holding a slot or still asking for one."""
        return self.alive() and not self.retiring and (self.ready or not self.answered)

    def idle(self) -> bool:
        """Holding a slot, alive, with nothing to do and not asked to stop: reusable by the next batch."""
        return self.ready and self.alive() and not self.stopped and not self.retiring and not self.in_flight

    def kill(self) -> None:
        self.gone = True
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join(timeout=5)
        self.tasks.close()


class _Crew:
    """A pool's worker processes and the queue they answer on; one batch's, or kept across batches."""

    def __init__(self, settings: PoolSettings, catalog: ReadCatalog, holder: str | None = None) -> None:
        self.ctx = _mp_context()
        self.result_q = self.ctx.Queue()
        self.workers: list[_Worker] = []
        self.settings, self.catalog = settings, catalog
        self.holder = holder  # names its workers' lock connections when kept (default: the batch's holder)

    def fits(self, settings: PoolSettings, catalog: ReadCatalog) -> bool:
        """Whether its workers run what `settings` and `catalog` ask for (engine, slots, language data, catalogue)."""
        ours = self.settings
        return (ours.engine, ours.slots, ours.tessdata_prefix) == (settings.engine, settings.slots,
                                                                   settings.tessdata_prefix) \
            and catalog == self.catalog

    def spawn(self) -> _Worker:
        settings = replace(self.settings, holder=self.holder) if self.holder else self.settings
        worker = _Worker(self.ctx, len(self.workers), settings, self.catalog, self.result_q)
        self.workers.append(worker)
        return worker

    def idle(self) -> list[_Worker]:
        return [w for w in self.workers if w.idle() and not w.gone]

    def keep_idle(self) -> None:
        """After a batch: keep the idle workers, stop the rest (their slots are released as they exit)."""
        for worker in self.workers:
            if not worker.gone and not worker.idle():
                if worker.ready:
                    worker.stop()
                worker.kill()

    def close(self) -> None:
        for worker in self.workers:
            if not worker.gone:
                worker.stop()
        self.kill_all()

    def kill_all(self) -> None:
        for worker in self.workers:
            worker.kill()
        self.result_q.close()


class _Keeper:
    """The crew kept across the batches of one `keep_workers()` block, in the process that opened it."""

    def __init__(self, holder: str) -> None:
        self.holder, self.pid = holder, os.getpid()
        self.crew: _Crew | None = None

    def crew_for(self, settings: PoolSettings, catalog: ReadCatalog) -> _Crew:
        if self.crew is not None and not self.crew.fits(settings, catalog):
            self.crew.close()
            self.crew = None
        if self.crew is None:
            self.crew = _Crew(settings, catalog, self.holder)
        return self.crew

    def drop(self) -> None:
        if self.crew is not None:
            self.crew.kill_all()
            self.crew = None

    def close(self) -> None:
        if self.crew is not None:
            self.crew.close()
            self.crew = None


_keeper: _Keeper | None = None


@contextmanager
def keep_workers(holder: str) -> Iterator[None]:
    """Within the block, `run_pool` calls in this process reuse the previous call's idle workers instead of starting
    new ones; `holder` names their lock connections (they serve several batches). Every kept worker is stopped,
    and its slot released, when the block ends, however it ends. The forkserver starts at once, in the background,
    so the first batch does not wait for its imports."""
    global _keeper
    if _keeper is not None and _keeper.pid == os.getpid():
        yield  # already inside one: the outer block owns the workers
        return
    outer, _keeper = _keeper, _Keeper(holder)
    _mp_context()
    threading.Thread(target=_start_forkserver, daemon=True, name="forkserver-start").start()
    try:
        yield
    finally:
        keeper, _keeper = _keeper, outer
        keeper.close()


def _start_forkserver() -> None:
    """Start the forkserver (it imports the worker module) while the first batch plans, not when it spawns."""
    from multiprocessing import forkserver

    forkserver.ensure_running()


def _active_keeper() -> _Keeper | None:
    return _keeper if _keeper is not None and _keeper.pid == os.getpid() else None


class _Pool:
    def __init__(self, tasks: Sequence[Task], settings: PoolSettings, crew: _Crew,
                 on_result: Callable[[TaskResult], None], on_tick: Callable[[list[int]], None],
                 wanted: Callable[[], int] | None) -> None:
        self.settings, self.crew, self.on_result, self.on_tick = settings, crew, on_result, on_tick
        self.wanted = wanted
        self.last_wanted = 0
        self.result_q = crew.result_q
        self.pending = deque(tasks)
        self.done: set[int] = set()
        self.outcome = PoolOutcome()
        self.workers = crew.workers
        self.per_worker = 2

    def spawn(self) -> None:
        self.crew.spawn()
        self.outcome.workers_started += 1

    def run(self, count: int, cap: int) -> None:
        """Start `count` workers, counting those kept from the previous batch; kept ones beyond `cap` retire."""
        kept = self.crew.idle()
        for worker in kept[cap:]:
            worker.retiring = True
        kept = kept[:cap]
        for worker in kept:
            worker.busy_since = time.monotonic()
            self.outcome.slots_held.append(worker.slot)
        self.outcome.workers_reused = self.outcome.workers_peak = len(kept)
        for _ in range(count - len(kept)):
            self.spawn()
        self.last_wanted = count
        if self.settings.max_in_flight:
            self.per_worker = max(1, self.settings.max_in_flight // count)
        while True:
            self.reap()
            self.on_tick(self.pids())
            self.govern()
            ready = [w for w in self.workers if w.ready and w.alive()]
            for worker in ready:
                while self.pending and not worker.retiring and len(worker.in_flight) < self.per_worker:
                    worker.send(self.pending.popleft())
                if worker.retiring and not worker.in_flight:
                    worker.stop(wait=False)
            busy = any(w.in_flight for w in ready)
            waiting = any(not w.answered and w.alive() for w in self.workers)
            if not busy and (not self.pending or not waiting):
                if self.pending and self.outcome.slots_held and not self.outcome.errors:
                    self.outcome.errors.append("every OCR worker exited before the batch finished")
                return
            try:
                kind, index, payload = self.result_q.get(timeout=POLL_SECONDS)
            except queue.Empty:
                continue
            self.receive(self.workers[index], kind, payload)

    def govern(self) -> None:
        """Follow the wanted worker count one worker at a time: retire the least busy worker while more run than
        wanted; start one more when the count wanted goes up (a worker refused a slot is not replaced)."""
        if self.wanted is None:
            return
        wanted = max(1, self.wanted())
        active = [w for w in self.workers if w.active()]
        if len(active) > wanted:
            victim = min(active, key=lambda w: (w.ready, len(w.in_flight)))
            victim.retiring = True
            self.outcome.retired += 1
            if not victim.ready:
                victim.kill()  # still waiting for a slot: nothing to finish
        elif wanted > self.last_wanted and self.pending and len(active) < min(wanted, self.settings.workers):
            self.spawn()
        self.last_wanted = wanted

    def receive(self, worker: _Worker, kind: str, payload) -> None:
        if worker.gone:
            return
        if kind == "result":
            worker.finished(payload.card_id)
            self.deliver(payload)
            return
        worker.answered = True
        if kind == "ready":
            worker.ready, worker.slot = True, payload
            self.outcome.slots_held.append(payload)
            holding = sum(1 for w in self.workers if w.ready and w.alive() and not w.stopped)
            self.outcome.workers_peak = max(self.outcome.workers_peak, holding)
        elif kind == "no-slot":
            self.outcome.refused += 1
        else:
            self.outcome.errors.append(str(payload))

    def deliver(self, result: TaskResult) -> None:
        if result.card_id not in self.done:
            self.done.add(result.card_id)
            self.on_result(result)

    def reap(self) -> None:
        """Replace workers that died or hung on a card: that card becomes a named skip, the rest go back in line."""
        now = time.monotonic()
        for worker in list(self.workers):
            hung = worker.in_flight and now - worker.busy_since > self.settings.task_timeout_seconds
            if worker.alive() and not hung:
                continue
            if hung:
                worker.kill()
            worker.answered = True
            if not hung and worker.proc.exitcode == EXIT_SLOT_LOST:
                self.replace_slot_lost(worker)
                continue
            if not worker.in_flight:
                continue
            suspect, *rest = worker.in_flight.values()
            worker.in_flight.clear()
            reason = "extraction-timeout" if hung else "worker-crashed"
            detail = {"seconds": round(now - worker.busy_since, 1), "exitcode": worker.proc.exitcode}
            self.deliver(TaskResult(suspect.card_id, suspect.content_sha256, EvidenceSkip(reason, detail), 0.0))
            self.pending.extendleft(reversed(rest))
            if self.outcome.replaced < self.settings.max_replacements:
                self.outcome.replaced += 1
                self.spawn()
            else:
                self.outcome.errors.append(f"OCR workers kept dying ({reason} on card {suspect.card_id}); "
                                           f"gave up after {self.outcome.replaced} replacements")

    def replace_slot_lost(self, worker: _Worker) -> None:
        """Its lock session ended and it stopped OCR: its cards go back in line, first, for a replacement."""
        if worker.slot_lost:
            return
        worker.slot_lost = True
        self.outcome.slots_lost += 1
        self.pending.extendleft(reversed(list(worker.in_flight.values())))
        worker.in_flight.clear()
        if self.pending:
            self.spawn()

    def pids(self) -> list[int]:
        return [w.proc.pid for w in self.workers if w.proc.pid is not None and w.alive()]


def run_pool(
    tasks: Sequence[Task],
    settings: PoolSettings,
    catalog: ReadCatalog,
    on_result: Callable[[TaskResult], None],
    on_tick: Callable[[list[int]], None] = lambda pids: None,
    wanted: Callable[[], int] | None = None,
) -> PoolOutcome:
    """Run `tasks` on up to `settings.workers` slot-holding workers, which read with `catalog`'s knowledge;
    `on_result` is called in this process.

    `on_tick(worker_pids)` runs at least every `POLL_SECONDS` and after every result (the envelope check rate-limits
    itself); if it raises, every worker is killed and the exception propagates. `wanted()`, when given, is asked
    as often how many workers to run (the load governor); the pool follows it one worker at a time, never below
    one. Tasks not finished (no slot, workers that kept dying) come back unprocessed. Inside `keep_workers()` the
    idle workers outlive the call, for the next one.
    """
    cap = min(settings.workers, max(1, wanted()) if wanted else settings.workers)
    count = min(cap, len(tasks))
    if count < 1:
        return PoolOutcome(unprocessed=list(tasks))
    keeper = _active_keeper()
    crew = keeper.crew_for(settings, catalog) if keeper else _Crew(settings, catalog)
    pool = _Pool(tasks, settings, crew, on_result, on_tick, wanted)
    finished = False
    try:
        pool.run(count, cap)
        finished = True
    finally:
        if keeper is None and finished:
            crew.close()
        elif keeper is None:
            crew.kill_all()
        elif finished:
            crew.keep_idle()
        else:
            keeper.drop()
    pool.outcome.unprocessed = [t for t in tasks if t.card_id not in pool.done]
    return pool.outcome
