"""The OCR worker processes of a pool: how each one starts (from a clean forkserver), and the crew kept across the
batches of one `keep_workers()` block.

Workers are forked from a forkserver that preloads the worker module, which keeps start-up cheap and safe in a
threaded parent. Each worker has its own task queue, so the pool knows which card a worker was on when it died.

Inside `keep_workers()` (a bulk run wraps its batches in it) a batch's idle workers are not stopped at its end:
the next batch in this process reuses them, still holding their slots and their loaded OCR model, so a run of
many batches pays the worker start once. They stop, and release their slots, when the block ends; a batch that
fails kills its workers, and a killed owner takes them with it (PR_SET_PDEATHSIG and the watchdog).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

from stage_e_dagster.domain.evidence.read_catalog import ReadCatalog
from stage_e_dagster.runtime import limit_ocr_threads
from stage_e_dagster.workers.ocr_worker import PoolSettings, Task, worker_main

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


class Worker:
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


class Crew:
    """A pool's worker processes and the queue they answer on; one batch's, or kept across batches."""

    def __init__(self, settings: PoolSettings, catalog: ReadCatalog, holder: str | None = None) -> None:
        self.ctx = _mp_context()
        self.result_q = self.ctx.Queue()
        self.workers: list[Worker] = []
        self.settings, self.catalog = settings, catalog
        self.holder = holder  # names its workers' lock connections when kept (default: the batch's holder)

    def fits(self, settings: PoolSettings, catalog: ReadCatalog) -> bool:
        """Whether its workers run what `settings` and `catalog` ask for (engine, slots, language data, catalogue)."""
        ours = self.settings
        return (ours.engine, ours.rescue, ours.slots, ours.tessdata_prefix) == (
            settings.engine, settings.rescue, settings.slots, settings.tessdata_prefix) \
            and (catalog is self.catalog or catalog == self.catalog)

    def spawn(self) -> Worker:
        settings = replace(self.settings, holder=self.holder) if self.holder else self.settings
        worker = Worker(self.ctx, len(self.workers), settings, self.catalog, self.result_q)
        self.workers.append(worker)
        return worker

    def idle(self) -> list[Worker]:
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
        self.crew: Crew | None = None

    def crew_for(self, settings: PoolSettings, catalog: ReadCatalog) -> Crew:
        if self.crew is not None and not self.crew.fits(settings, catalog):
            self.crew.close()
            self.crew = None
        if self.crew is None:
            self.crew = Crew(settings, catalog, self.holder)
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


def active_keeper() -> _Keeper | None:
    return _keeper if _keeper is not None and _keeper.pid == os.getpid() else None
