"""The OCR worker pool: up to N slot-holding worker processes (`ocr_crew`), fed a bounded number of cards each.

The pool knows which card each worker was on: when a worker dies or hangs, that card is recorded as a named skip
(`worker-crashed`, `extraction-timeout`) so one poisonous image cannot fail every batch it lands in, the worker's
other cards go back in line, and a replacement worker (which must take a slot of its own) carries on, up to
`max_replacements` per batch. A worker that exits because its lock session ended (`EXIT_SLOT_LOST`) did nothing
wrong: every card it held goes back in line and a replacement, which must take a slot again, is started outside
that limit. Inside `keep_workers()` the idle workers outlive a batch, for the next one (see `ocr_crew`).
"""

from __future__ import annotations

import queue
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from stage_e_dagster.domain.evidence.model import EvidenceSkip
from stage_e_dagster.domain.evidence.read_catalog import ReadCatalog
from stage_e_dagster.workers.ocr_crew import Crew, Worker, active_keeper, keep_workers
from stage_e_dagster.workers.ocr_worker import EXIT_SLOT_LOST, PoolSettings, Task, TaskResult

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


class _Pool:
    def __init__(self, tasks: Sequence[Task], settings: PoolSettings, crew: Crew,
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

    def receive(self, worker: Worker, kind: str, payload) -> None:
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

    def replace_slot_lost(self, worker: Worker) -> None:
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
    keeper = active_keeper()
    crew = keeper.crew_for(settings, catalog) if keeper else Crew(settings, catalog)
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
