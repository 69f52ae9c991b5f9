"""BULK mode: drive the backlog through the `micro_batch` job in this process, batch after batch.

Runs are recorded in the given Dagster instance, so they show in the UI beside the streamed ones. Each batch is
claimed atomically (`in_process.claim`), so a bulk run beside a draining run never takes the same cards. Each card
is attempted at most once per invocation (a watermark on the card id moves past every batch, whatever its outcome).
Batches that died earlier are reclaimed first, so a killed `stage-e run` gives its cards back to the next one.
A database that goes away mid-run ends the run with `DatabaseLost`, one clear message, instead of a traceback.
The OCR workers are kept from batch to batch (`keep_workers`): the run pays their start and model load once, and
they stop, releasing their slots, when the run ends. The instance's storage holds its Postgres connections in a
pool for the whole invocation (as the webserver does) instead of opening one per event: a run writes about 25
events, and each new connection cost a server backend start.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field

import psycopg2
from dagster import DagsterInstance
from dagster_postgres.utils import DagsterPostgresException
from sqlalchemy import URL, Engine
from sqlalchemy.exc import InterfaceError, OperationalError

from stage_e_dagster.control.reaper import reclaim_dead_batches
from stage_e_dagster.db.core.urls import redact
from stage_e_dagster.host import process_owner
from stage_e_dagster.in_process import claim, run_claim
from stage_e_dagster.job_contracts import MICRO_BATCH, BatchSpec
from stage_e_dagster.settings import Settings
from stage_e_dagster.workers.ocr_pool import keep_workers

STORAGE_POOL_RECYCLE_SECONDS = 3600
_pooled: weakref.WeakSet[DagsterInstance] = weakref.WeakSet()


@dataclass
class BulkSummary:
    runs: int = 0
    cards: int = 0
    statuses: dict[str, int] = field(default_factory=dict)
    failed_runs: list[str] = field(default_factory=list)
    halted: bool = False
    reclaimed: list[str] = field(default_factory=list)

    def line(self) -> str:
        statuses = ", ".join(f"{count} {status}" for status, count in sorted(self.statuses.items())) or "none"
        return f"{self.runs} runs over {self.cards} cards; ledger: {statuses}"


def run_backlog(
    instance: DagsterInstance,
    engine: Engine,
    *,
    limit: int | None = None,
    batch_size: int = Settings.batch_size,
    mode: str = "bulk",
    trip_override: str | None = None,
    reclaim_after_seconds: float = Settings.reclaim_after_seconds,
    on_batch: Callable[[int, str], None] = lambda cards, status: None,
) -> BulkSummary:
    """Run batches until no card needs work, `limit` cards were taken, or an envelope trip halts the run."""
    from stage_e_dagster.definitions import defs

    job = defs.resolve_job_def(MICRO_BATCH)
    summary = BulkSummary()
    _pool_storage_connections(instance)
    try:
        summary.reclaimed = [row.run_id for row in reclaim_dead_batches(instance, engine, reclaim_after_seconds)]
        with keep_workers(holder=f"bulk-{os.getpid()}"):
            watermark = None
            while (limit is None or summary.cards < limit) and not summary.halted:
                size = batch_size if limit is None else min(batch_size, limit - summary.cards)
                claimed = claim(engine, instance, trigger="bulk", mode=mode, limit=size, owner=process_owner(),
                                after_id=watermark)
                if claimed is None:
                    break
                watermark = claimed.card_ids[-1]
                spec = BatchSpec(claimed.card_ids, trigger="bulk", mode=mode, trip_override=trip_override)
                status, success = run_claim(job, instance, engine, claimed, spec)
                if not success:
                    summary.failed_runs.append(claimed.run_id)
                summary.halted = status == "halted"
                summary.runs += 1
                summary.cards += len(claimed.card_ids)
                summary.statuses[status] = summary.statuses.get(status, 0) + 1
                on_batch(len(claimed.card_ids), status)
    except LOST_DATABASE as err:
        raise DatabaseLost(engine.url, err) from None
    return summary


def _pool_storage_connections(instance: DagsterInstance) -> None:
    """Pool the instance's storage connections (Dagster's webserver setting; no statement timeout), once."""
    if instance not in _pooled:
        instance.optimize_for_webserver(statement_timeout=0, pool_recycle=STORAGE_POOL_RECYCLE_SECONDS, max_overflow=5)
        _pooled.add(instance)


LOST_DATABASE = (DagsterPostgresException, OperationalError, InterfaceError, psycopg2.OperationalError,
                 psycopg2.InterfaceError)


class DatabaseLost(RuntimeError):
    """Postgres went away under a bulk run; the message names the database and what to do."""

    def __init__(self, url: str | URL, cause: BaseException) -> None:
        first = (str(cause).strip().splitlines() or [type(cause).__name__])[0]
        super().__init__(
            f"lost the database {redact(url)} mid-run ({type(cause).__name__}: {first[:160]}). Bring it back "
            "(`stage-e postgres start` for the embedded server) and run again: the interrupted batch is reclaimed "
            "and its cards are offered again."
        )
