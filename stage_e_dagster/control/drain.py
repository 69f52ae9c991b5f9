"""Draining runs: how the stream reaches a run that is already going.

A `stream_drain` run keeps taking work until the stream goes quiet. Each turn of its loop it:

1. watches the local source directories (every `watch_seconds`) and syncs a changed one itself, so a dropped file
   becomes a card without waiting for a sensor tick;
2. stops at the gates (streaming off, an open envelope trip) before it claims anything;
3. claims the next offered cards atomically (`db.runs.ledger.claim_batch`: the cards and the batch's `running` row
   in one serialised transaction) and runs them as one `micro_batch` run in its own process, so each claim is a
   run of its own in the UI and in the ledger, and the reaper reclaims exactly a dead claim's cards;
4. keeps its OCR workers (and their slots) warm between claims, and releases them once it had nothing to do for
   `worker_grace_seconds`, so an idle stream never keeps a bulk run or another host from a slot for longer.

It ends when it found nothing to claim for `idle_seconds`, when it ran `max_seconds` in all (run monitoring's
`max_runtime_seconds` must never end it mid-claim), or when a claim halted (an envelope trip). The `card_stream` and
`source_inbox` sensors start a new one whenever cards are owed and fewer than `drain_runs` are going.

`drain` is the loop with its effects passed in, so it is tested without Dagster; `ops/drain.py` wires it.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

IDLE_POLL_SECONDS = (0.25, 1.0)
"""How often an idle draining run looks for work: every 0.25 s while it was busy a moment ago (a trickle's next
card waits at most that long), every second once it has been idle for `SLOW_POLL_AFTER_SECONDS` (a quiet stream's
cost stays a few small queries a second)."""
SLOW_POLL_AFTER_SECONDS = 30.0


@dataclass(frozen=True)
class DrainLimits:
    idle_seconds: float
    max_seconds: float
    worker_grace_seconds: float
    watch_seconds: float


@dataclass(frozen=True)
class Claim:
    """One claimed batch: the run id its row was opened under, and its cards."""

    run_id: str
    card_ids: tuple[int, ...]


@dataclass
class DrainSummary:
    claims: int = 0
    cards: int = 0
    statuses: Counter[str] = field(default_factory=Counter)
    synced_files: int = 0
    ended: str = ""

    def line(self) -> str:
        statuses = ", ".join(f"{n} {s}" for s, n in sorted(self.statuses.items())) or "none"
        return f"{self.claims} claims over {self.cards} cards ({statuses}); ended: {self.ended}"


class WarmWorkers(Protocol):
    def ensure(self) -> None:
        """Keep OCR workers across the next claims (started lazily by the first claim that needs them)."""

    def release(self) -> None:
        """Stop the kept workers, releasing their slots (a no-op when none are kept)."""


def drain(
    *,
    claim: Callable[[], Claim | None],
    run_claim: Callable[[Claim], str],
    halt_reason: Callable[[], str | None],
    watch: Callable[[], int],
    workers: WarmWorkers,
    limits: DrainLimits,
    log: Callable[[str], None] = lambda message: None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> DrainSummary:
    """Claim and run batches until the stream is idle, the time limit passes, a gate closes or a claim halts.

    `claim()` takes the next batch or None; `run_claim(claim)` runs it and returns its ledger status; `watch()`
    syncs changed local sources and returns how many files it read; `halt_reason()` says why nothing may start."""
    summary = DrainSummary()
    started = last_work = clock()
    last_watch = float("-inf")
    try:
        while True:
            now = clock()
            if now - started >= limits.max_seconds:
                summary.ended = f"time limit ({limits.max_seconds:g} s)"
                break
            if now - last_watch >= limits.watch_seconds:
                last_watch = now
                summary.synced_files += watch()
            halted = halt_reason()
            if halted:
                summary.ended = f"gate closed: {halted}"
                break
            batch = claim()
            if batch is not None:
                workers.ensure()
                status = run_claim(batch)
                summary.claims += 1
                summary.cards += len(batch.card_ids)
                summary.statuses[status] += 1
                log(f"claim {summary.claims}: {len(batch.card_ids)} card(s), run {batch.run_id}: {status}")
                last_work = clock()
                if status == "halted":
                    summary.ended = f"run {batch.run_id} halted"
                    break
                continue
            idle = clock() - last_work
            if idle >= limits.idle_seconds:
                summary.ended = f"idle for {limits.idle_seconds:g} s"
                break
            if idle >= limits.worker_grace_seconds:
                workers.release()
            sleep(IDLE_POLL_SECONDS[0] if idle < SLOW_POLL_AFTER_SECONDS else IDLE_POLL_SECONDS[1])
    finally:
        workers.release()
    return summary
