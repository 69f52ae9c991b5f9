"""The Stage C runner: one batch without Dagster: plan, extract on slot-holding workers, store, count."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from stage_e_dagster.db import evidence_store
from stage_e_dagster.domain.evidence.extract import EXTRACTOR_VERSIONS
from stage_e_dagster.domain.evidence.model import EvidenceSkip
from stage_e_dagster.domain.governor import Governor
from stage_e_dagster.domain.stage_c import StageCCounters, extractors_needed
from stage_e_dagster.workers.ocr_pool import PoolSettings, Task, TaskResult, run_pool


def run_stage_c(
    url: str,
    card_ids: Sequence[int],
    run_id: str | None,
    settings: PoolSettings,
    *,
    force: bool = False,
    on_tick: Callable[[list[int]], None] = lambda pids: None,
    log: Callable[[str], None] = lambda message: None,
    governor: Governor | None = None,
    read_load: Callable[[], float | None] = lambda: None,
) -> StageCCounters:
    """Extract evidence for the batch's cards that need it. Each result is stored as it arrives (one small
    transaction per card), so a crash loses only the cards in flight.

    With a `governor`, the number of workers follows `read_load()` (the host's 1-minute load); every step is
    logged and counted.
    """
    started = time.perf_counter()
    counters = StageCCounters(cards_in=len(card_ids))
    tasks: list[Task] = []
    for work in evidence_store.load_batch(url, card_ids):
        needed = extractors_needed(work, force)
        if work.missing:
            counters.missing += 1
        elif needed is None:
            counters.current += 1
        else:
            tasks.append(Task(work.card_id, work.path, work.content_sha256, needed))
    if not tasks:
        counters.elapsed_seconds = time.perf_counter() - started
        return counters

    def store(result: TaskResult) -> None:
        if isinstance(result.outcome, EvidenceSkip):
            counters.skipped[result.outcome.reason] += 1
            evidence_store.log_skip(url, result.card_id, result.content_sha256, result.outcome, run_id)
            return
        evidence_store.save_evidence(url, result.card_id, result.content_sha256, result.outcome, run_id)
        full = len(result.outcome.extractor_versions) == len(EXTRACTOR_VERSIONS)
        counters.extracted += 1
        counters.carried_forward += 0 if full else 1

    wanted = None
    if governor is not None:
        governor.started = time.monotonic()

        def wanted() -> int:
            step = governor.observe(read_load(), time.monotonic())
            if step is not None:
                log(f"load governor: {step.workers} OCR worker(s) from now on ({step.reason})")
            return governor.workers

    known = evidence_store.known_set_codes(url)
    outcome = run_pool(tasks, settings, known, on_result=store, on_tick=on_tick, wanted=wanted)
    for error in outcome.errors:
        log(error)
    counters.workers = outcome.workers_started
    counters.workers_peak = outcome.workers_peak
    counters.workers_cap = settings.workers
    if governor is not None:
        counters.governor_steps = [step.as_dict() for step in governor.steps]
    counters.slots_held = len(outcome.slots_held)
    counters.throttled = outcome.throttled
    counters.not_processed = len(outcome.unprocessed)
    counters.elapsed_seconds = time.perf_counter() - started
    if outcome.errors and (outcome.throttled or outcome.unprocessed):
        raise StageCIncomplete(
            f"{counters.not_processed} of {len(tasks)} cards were not processed: {'; '.join(outcome.errors)}"
            f" (stored so far: {counters.extracted} extracted, {sum(counters.skipped.values())} skipped)"
        )
    return counters


class StageCIncomplete(RuntimeError):
    """Workers failed or died before the batch was done: the run fails (a truthful ledger), the evidence already
    stored stays, and the cards left over remain eligible for the next batch or the sweep."""
