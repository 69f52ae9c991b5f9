"""The card stream sensor: requests micro-batch runs for the cards that need Stage C or D, as they come.

Each tick first reclaims dead batches (a `running` ledger row that stopped heartbeating, or whose Dagster run
ended), then checks the gates (`control/gates.py`), then takes the next offered cards from the work queue
(`db.work.queue.cards_needing_work`: cards owed work whose retry wait is over, outside running and queued batches) and
groups them into batches. So new cards, and the cards of halted, failed, throttled or reclaimed batches, are all
offered again within a tick or two of nothing gating them.

Run keys are deterministic per batch content: a card's bytes and its attempt count (which every unsuccessful batch
raises) and the hour, so a batch the daemon already launched is not launched twice, while a card whose earlier
batch ended without it gets a fresh key.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from dagster import (
    DagsterInstance,
    DefaultSensorStatus,
    RunRequest,
    SensorDefinition,
    SensorEvaluationContext,
    SensorResult,
    SkipReason,
    sensor,
)
from sqlalchemy import Engine

from stage_e_dagster.control.gates import backpressure_reason, halt_reason
from stage_e_dagster.control.reaper import reclaim_dead_batches
from stage_e_dagster.control.run_queue import busy_card_ids, queued_runs
from stage_e_dagster.db.work.queue import StreamCard, cards_needing_work
from stage_e_dagster.domain.batching import runs_allowed, split_batches, stream_run_key
from stage_e_dagster.jobs import BatchSpec, micro_batch
from stage_e_dagster.resources.database import AppDatabase
from stage_e_dagster.resources.stream import StreamControl
from stage_e_dagster.settings import Settings

TRIGGER = "card-event"
MODE = "passive"
KEY_EPOCH_SECONDS = 3600
"""Run keys change at least this often, so a batch whose run vanished unseen (cancelled before it started) is
requested again."""


def card_version(card: StreamCard) -> str:
    """What makes a card's batch worth a new run: its bytes, and how many batches already ended without it."""
    return f"{card.content_sha256}#{card.attempts}"


def stream_requests(cards: list[StreamCard], batch_size: int, now: float | None = None) -> list[RunRequest]:
    """One RunRequest per batch of `batch_size` cards, each with a deterministic run key."""
    epoch = int((time.time() if now is None else now) // KEY_EPOCH_SECONDS)
    requests = []
    for batch in split_batches(cards, batch_size):
        spec = BatchSpec(tuple(card.id for card in batch), trigger=TRIGGER, mode=MODE)
        requests.append(
            RunRequest(
                run_key=stream_run_key([(card.id, card_version(card)) for card in batch], epoch),
                run_config=spec.run_config(),
                tags=spec.tags(),
            )
        )
    return requests


def evaluate_stream(
    instance: DagsterInstance, engine: Engine, stream: StreamControl,
    log: Callable[[str], None] = lambda message: None,
) -> SensorResult | SkipReason:
    """One tick: reclaim dead batches, check the gates, then request batches for the next offered cards."""
    for row in reclaim_dead_batches(instance, engine, stream.reclaim_after_seconds):
        log(f"reclaimed batch {row.run_id} ({len(row.card_ids)} cards): {row.failure_reason}")
    halted = halt_reason(engine, stream.enabled)
    if halted:
        return SkipReason(halted)
    queued = queued_runs(instance)
    runs = runs_allowed(queued, stream.max_queued_runs, stream.max_runs_per_tick)
    if runs == 0:
        return SkipReason(backpressure_reason(queued, stream.max_queued_runs))
    busy = busy_card_ids(instance, engine)
    with engine.connect() as conn:
        cards = cards_needing_work(conn, runs * stream.batch_size, busy)
    if not cards:
        return SkipReason("no card needs work outside the running and queued batches")
    return SensorResult(run_requests=stream_requests(cards, stream.batch_size))


def build_card_stream(interval_seconds: int = Settings.stream_interval_seconds) -> SensorDefinition:
    """The `card_stream` sensor, ticking at most every `interval_seconds` (`Settings.stream_interval_seconds`)."""

    @sensor(
        name="card_stream",
        job=micro_batch,
        minimum_interval_seconds=interval_seconds,
        default_status=DefaultSensorStatus.RUNNING,
        description="Requests micro-batch runs for cards that need Stage C or D, in batches, with backpressure; "
                    "reclaims batches that died.",
    )
    def card_stream(
        context: SensorEvaluationContext, database: AppDatabase, stream: StreamControl
    ) -> SensorResult | SkipReason:
        return evaluate_stream(context.instance, database.engine, stream, log=context.log.warning)

    return card_stream


card_stream = build_card_stream()
