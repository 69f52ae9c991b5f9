"""The Stage C runner: one batch without Dagster: plan, fetch the remote cards' bytes, extract on slot-holding
workers, store, count.

Remote cards are fetched first (`stage_c_fetch`), through the fleet-wide limiter; only the fetched ones are
extracted. Copies (cards with identical bytes) are extracted once and carried to each other (`stage_c_copies`). With
a load governor, the number of OCR workers follows the host's 1-minute load; every step is logged and counted."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from sqlalchemy import Engine

from stage_e_dagster.db.catalog.read import current_read_catalog
from stage_e_dagster.db.judgement import evidence_store
from stage_e_dagster.domain.governor import Governor
from stage_e_dagster.domain.stage_c import StageCCounters, extractors_needed
from stage_e_dagster.stages.stage_c_copies import COPY_WAIT_SECONDS, extract_once_per_content
from stage_e_dagster.stages.stage_c_fetch import RemoteFetcher
from stage_e_dagster.workers.ocr_pool import PoolSettings, Task


def run_stage_c(
    engine: Engine,
    card_ids: Sequence[int],
    run_id: str | None,
    settings: PoolSettings,
    *,
    force: bool = False,
    on_tick: Callable[[list[int]], None] = lambda pids: None,
    log: Callable[[str], None] = lambda message: None,
    governor: Governor | None = None,
    read_load: Callable[[], float | None] = lambda: None,
    copy_wait_seconds: float = COPY_WAIT_SECONDS,
    fetcher: RemoteFetcher | None = None,
) -> StageCCounters:
    """Extract evidence for the batch's cards that need it. Each result is stored as it arrives (one small
    transaction per card), so a crash loses only the cards in flight. Remote cards need `fetcher`; without one they
    are left owed (counted `fetch.no_fetcher`)."""
    started = time.perf_counter()
    counters = StageCCounters(cards_in=len(card_ids), workers_cap=settings.workers)
    tasks: list[Task] = []
    remote = []
    with engine.connect() as conn:
        batch = evidence_store.load_batch(conn, card_ids)
    for work in batch:
        needed = extractors_needed(work, force)
        if work.missing:
            counters.missing += 1
        elif needed is None:
            counters.current += 1
        elif work.remote is not None:
            remote.append((work, needed))
        else:
            tasks.append(Task(work.card_id, work.path, work.content_sha256, needed, work.name, root=work.root))
    if remote and fetcher is None:
        counters.fetch["no_fetcher"] += len(remote)
    elif remote:
        tasks += fetcher.fetch(remote, counters, on_tick)
    if not tasks:
        counters.workers_why = "no card needs extraction: no worker started"
        counters.elapsed_seconds = time.perf_counter() - started
        return counters

    wanted = None
    if governor is not None:
        governor.started = time.monotonic()

        def wanted() -> int:
            step = governor.observe(read_load(), time.monotonic())
            if step is not None:
                log(f"load governor: {step.workers} OCR worker(s) from now on ({step.reason})")
            return governor.workers

    with engine.connect() as conn:
        catalog = current_read_catalog(conn)
    errors = extract_once_per_content(engine, tasks, run_id, settings, catalog, counters, force=force, on_tick=on_tick,
                                      copy_wait_seconds=copy_wait_seconds, wanted=wanted)
    if fetcher is not None:
        fetcher.release([task.card_id for task in tasks])
    for error in errors:
        log(error)
    counters.workers_why = why_workers(settings.workers, len(tasks), governor)
    if governor is not None:
        counters.governor_steps = [step.as_dict() for step in governor.steps]
        counters.load_target = governor.target
        counters.load_peak = None if governor.load_peak is None else round(governor.load_peak, 2)
    counters.elapsed_seconds = time.perf_counter() - started
    if errors and (counters.throttled or counters.not_processed):
        raise StageCIncomplete(
            f"{counters.not_processed} of {len(tasks)} cards were not processed: {'; '.join(errors)}"
            f" (stored so far: {counters.extracted} extracted, {sum(counters.skipped.values())} skipped)"
        )
    return counters


def why_workers(cap: int, tasks: int, governor: Governor | None) -> str:
    """One line: how many OCR workers a batch could run and what decided it (slot cap, card count, governor)."""
    why = governor.explain() if governor is not None else f"up to {cap} OCR worker(s) (the slot cap), no governor"
    if tasks < cap:
        why = f"only {tasks} card(s) to extract, so at most {tasks} worker(s); {why}"
    return why


class StageCIncomplete(RuntimeError):
    """Workers failed or died before the batch was done: the run fails (a truthful ledger), the evidence already
    stored stays, and the cards left over remain eligible for the next batch or the sweep."""
