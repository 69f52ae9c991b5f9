"""Stage C over identity groups: each content hash is extracted once, by one batch, and carried to its copies.

For a batch's cards that need extraction:
1. Carry first: a card whose bytes already have current evidence (or a Stage C pixel skip) on another card gets a
   carried copy of it; no OCR.
2. Lock the remaining content hashes (`ContentLocks`, session advisory locks). For each hash held, carry again (a
   concurrent batch may have stored it between step 1 and the lock), then extract the group's leader only. As
   each leader's result is stored, it is carried to the group's other cards in this batch and the hash's lock is
   released. A leader's file skip (`file-missing`, `content-changed`) is about that copy's file, not the bytes: the
   next copy leads in the next round.
3. A hash locked by another batch is being extracted there: wait until its lock is free, then go round again,
   which carries what that batch stored (or extracts it here if it stored nothing).

So two copies in one batch, or in two concurrent batches, cost one OCR; every write is an idempotent upsert, and a
killed batch's locks vanish with its connection.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

from sqlalchemy import Engine

from stage_e_dagster.db.judgement import evidence_store
from stage_e_dagster.db.judgement.identity_groups import ContentLocks, carry_evidence, carry_skips, settled
from stage_e_dagster.domain.evidence.extract import EXTRACTOR_VERSIONS
from stage_e_dagster.domain.evidence.model import EvidenceSkip
from stage_e_dagster.domain.evidence.read_catalog import ReadCatalog
from stage_e_dagster.domain.identity import copy_groups
from stage_e_dagster.domain.stage_c import StageCCounters
from stage_e_dagster.domain.work import FILE_SKIPS
from stage_e_dagster.workers.ocr_pool import PoolSettings, Task, TaskResult, run_pool

COPY_WAIT_SECONDS = 120.0
"""How long a batch waits for another batch to finish extracting a copy's bytes before leaving that card for
later (the card stays owed to Stage C; the sweep takes it)."""


def carry_from_copies(engine: Engine, card_ids: Collection[int], run_id: str | None, counters: StageCCounters
                      ) -> set[int]:
    """Serve the cards from a copy's evidence, else a copy's pixel skip; returns the cards served, and those a
    concurrent batch served meanwhile (counted current). Each step is its own transaction."""
    with engine.begin() as conn:
        served = carry_evidence(conn, card_ids, run_id)
    with engine.begin() as conn:
        served |= carry_skips(conn, set(card_ids) - served, run_id)
    counters.copies_carried += len(served)
    with engine.connect() as conn:
        done = settled(conn, set(card_ids) - served)
    counters.current += len(done)
    return served | done


class _Batch:
    """One batch's copy-aware extraction: what is still pending, the current round's groups, and the locks."""

    def __init__(self, engine: Engine, tasks: Sequence[Task], run_id: str | None, counters: StageCCounters,
                 locks: ContentLocks, force: bool) -> None:
        self.engine, self.run_id, self.counters, self.locks, self.force = engine, run_id, counters, locks, force
        self.by_card = {task.card_id: task for task in tasks}
        self.hashes = {task.card_id: task.content_sha256 for task in tasks}
        self.pending = set(self.by_card)
        self.groups: dict[str, list[int]] = {}

    def carry(self, card_ids: Collection[int]) -> None:
        if not self.force:
            self.pending -= carry_from_copies(self.engine, card_ids, self.run_id, self.counters)

    def lock_round(self) -> set[str]:
        """Group what is pending, take the free hash locks, carry what a copy already has; the hashes to extract."""
        self.groups = copy_groups(self.pending, self.hashes)
        held = self.locks.try_lock(self.groups)
        if not self.force and held:
            self.carry([c for sha in held for c in self.groups[sha]])
            self.groups = copy_groups(self.pending, self.hashes)
            for sha in held - set(self.groups):
                self.locks.release(sha)
            held &= set(self.groups)
        return held

    def store(self, result: TaskResult) -> None:
        """Store a leader's result, carry it to its copies in this batch, release its hash (the result and its carry
        are each a transaction of their own)."""
        sha = self.hashes[result.card_id]
        self.counters.worker_seconds += result.seconds
        followers = [c for c in self.groups[sha] if c != result.card_id]
        self.pending.discard(result.card_id)
        if isinstance(result.outcome, EvidenceSkip):
            self.counters.skipped[result.outcome.reason] += 1
            with self.engine.begin() as conn:
                evidence_store.log_skip(conn, result.card_id, sha, result.outcome, self.run_id)
            if result.outcome.reason not in FILE_SKIPS:  # else the next copy leads next round
                with self.engine.begin() as conn:
                    self.counters.copies_carried += len(carry_skips(conn, followers, self.run_id))
                self.pending.difference_update(followers)
        else:
            with self.engine.begin() as conn:
                evidence_store.save_evidence(conn, result.card_id, sha, result.outcome, self.run_id)
            self.counters.extracted += 1
            self.counters.carried_forward += len(result.outcome.extractor_versions) < len(EXTRACTOR_VERSIONS)
            with self.engine.begin() as conn:
                carried = carry_evidence(conn, followers, self.run_id, donor=result.card_id,
                                         overwrite=self.force)
            self.counters.copies_carried += len(carried)
            self.pending.difference_update(followers)
        self.locks.release(sha)


def extract_once_per_content(
    engine: Engine,
    tasks: Sequence[Task],
    run_id: str | None,
    settings: PoolSettings,
    catalog: ReadCatalog,
    counters: StageCCounters,
    *,
    force: bool = False,
    on_tick: Callable[[list[int]], None] = lambda pids: None,
    copy_wait_seconds: float = COPY_WAIT_SECONDS,
    wanted: Callable[[], int] | None = None,
) -> list[str]:
    """Extract the tasks' cards, once per content hash (see the module docstring); updates `counters` and returns
    the worker pool's errors. `force` re-extracts even where a copy has current evidence; `wanted` is the load
    governor's worker count (see `workers.ocr_pool.run_pool`)."""
    errors: list[str] = []
    with ContentLocks(engine, settings.holder) as locks:
        batch = _Batch(engine, tasks, run_id, counters, locks, force)
        batch.carry(set(batch.pending))
        for _round in range(len(tasks) + 1):
            if not batch.pending:
                break
            held = batch.lock_round()
            leaders = sorted((batch.by_card[batch.groups[sha][0]] for sha in held), key=lambda t: t.card_id)
            if leaders:
                outcome = run_pool(leaders, settings, catalog, on_result=batch.store, on_tick=on_tick,
                                   wanted=wanted)
                errors.extend(outcome.errors)
                counters.workers += outcome.workers_started
                counters.workers_reused = max(counters.workers_reused, outcome.workers_reused)
                counters.workers_peak = max(counters.workers_peak, outcome.workers_peak)
                counters.slots_held = max(counters.slots_held, len(outcome.slots_held))
                counters.throttled = counters.throttled or outcome.throttled
                for task in outcome.unprocessed:
                    locks.release(task.content_sha256)
                if outcome.throttled or outcome.unprocessed:
                    break
            busy = set(batch.groups) - held
            if busy and not locks.wait_free(busy, copy_wait_seconds):
                break
            if not leaders and not busy:
                break
        counters.not_processed = len(batch.pending)
    return errors
