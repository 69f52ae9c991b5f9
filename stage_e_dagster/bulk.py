"""BULK mode: drive the backlog through the `micro_batch` job in this process, batch after batch.

Runs are recorded in the given Dagster instance, so they show in the UI beside the streamed ones. Each card is
attempted at most once per invocation (a watermark moves past every batch, whatever its outcome).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from dagster import DagsterInstance

from stage_e_dagster.db import ledger
from stage_e_dagster.db.stream import cards_needing_work
from stage_e_dagster.jobs import MICRO_BATCH, BatchSpec
from stage_e_dagster.settings import Settings

# Per-event DEBUG lines would bury the progress bar; the events are still stored and shown in the UI.
QUIET = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}


@dataclass
class BulkSummary:
    runs: int = 0
    cards: int = 0
    statuses: dict[str, int] = field(default_factory=dict)
    failed_runs: list[str] = field(default_factory=list)
    halted: bool = False

    def line(self) -> str:
        statuses = ", ".join(f"{count} {status}" for status, count in sorted(self.statuses.items())) or "none"
        return f"{self.runs} runs over {self.cards} cards; ledger: {statuses}"


def run_backlog(
    instance: DagsterInstance,
    url: str,
    *,
    limit: int | None = None,
    batch_size: int = Settings.batch_size,
    mode: str = "bulk",
    on_batch: Callable[[int, str], None] = lambda cards, status: None,
) -> BulkSummary:
    """Run batches until no card needs work, `limit` cards were taken, or an envelope trip halts the run."""
    from stage_e_dagster.definitions import defs

    job = defs.resolve_job_def(MICRO_BATCH)
    summary = BulkSummary()
    watermark = None
    while limit is None or summary.cards < limit:
        size = batch_size if limit is None else min(batch_size, limit - summary.cards)
        cards = cards_needing_work(url, watermark, size)
        if not cards:
            break
        watermark = (cards[-1].updated_at, cards[-1].id)
        spec = BatchSpec(tuple(c.id for c in cards), trigger="bulk", mode=mode)
        result = job.execute_in_process(
            run_config={**spec.run_config(), **QUIET}, instance=instance, raise_on_error=False, tags=spec.tags(),
        )
        row = ledger.get(url, result.run_id)
        status = row.status if row else "missing"
        if not result.success:
            summary.failed_runs.append(result.run_id)
            status = _record_failure(url, result, spec)
            if status == "halted":
                summary.halted = True
        summary.runs += 1
        summary.cards += len(cards)
        summary.statuses[status] = summary.statuses.get(status, 0) + 1
        on_batch(len(cards), status)
        if summary.halted:
            break
    return summary


def _record_failure(url: str, result, spec: BatchSpec) -> str:
    """Record a failed in-process run as the run-failure sensor would (it may not be running): a trip and
    `halted` for an envelope breach, else `failed` with the reason. Idempotent with the sensor."""
    from dagster import DagsterEventType

    from stage_e_dagster.sensors.run_failures import classify_failure, record_failure

    event = next((e for e in result.all_events if e.event_type == DagsterEventType.RUN_FAILURE), None)
    if event is None:
        return "failed"
    outcome = classify_failure(event)
    record_failure(url, result.run_id, spec.run_config(), outcome, MICRO_BATCH)
    return outcome.status
