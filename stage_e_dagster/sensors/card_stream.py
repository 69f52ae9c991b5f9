"""The card stream sensor: requests micro-batch runs for cards that need Stage C or D, as they arrive.

Its cursor is a watermark over (card.updated_at, card.id): ingest bumps `updated_at` when a file's bytes change,
which is how stale evidence re-opens a card. Each tick takes the next cards beyond the watermark that need
work, groups them into batches, and moves the watermark only past the cards it requested. The gates it shares with
the backstop sweep are in `sensors/gates.py`.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

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

from stage_e_dagster.db.stream import StreamCard, cards_needing_work
from stage_e_dagster.domain.batching import runs_allowed, split_batches, stream_run_key
from stage_e_dagster.jobs import BatchSpec, micro_batch
from stage_e_dagster.resources.database import AppDatabase
from stage_e_dagster.resources.stream import StreamControl
from stage_e_dagster.sensors.gates import backpressure_reason, busy_card_ids, halt_reason, queued_runs
from stage_e_dagster.settings import Settings

TRIGGER = "card-event"
MODE = "passive"

Watermark = tuple[datetime, int]


def format_cursor(card: StreamCard) -> str:
    """JSON watermark: the (updated_at, id) of the last card requested, updated_at in UTC ISO 8601."""
    return json.dumps({"updated_at": card.updated_at.astimezone(UTC).isoformat(), "card_id": card.id})


def parse_cursor(cursor: str | None) -> Watermark | None:
    """The watermark in a cursor; None (start from the beginning) for no cursor or one that does not parse."""
    if not cursor:
        return None
    try:
        data = json.loads(cursor)
        return datetime.fromisoformat(data["updated_at"]), int(data["card_id"])
    except (ValueError, KeyError, TypeError):
        return None


def card_version(card: StreamCard) -> str:
    """What makes a card's batch worth a new run: its bytes and when ingest last touched it."""
    return f"{card.content_sha256}@{card.updated_at.astimezone(UTC).isoformat()}"


def stream_requests(cards: list[StreamCard], batch_size: int) -> list[RunRequest]:
    """One RunRequest per batch of `batch_size` cards, each with a deterministic run key."""
    requests = []
    for batch in split_batches(cards, batch_size):
        spec = BatchSpec(tuple(card.id for card in batch), trigger=TRIGGER, mode=MODE)
        requests.append(
            RunRequest(
                run_key=stream_run_key([(card.id, card_version(card)) for card in batch]),
                run_config=spec.run_config(),
                tags=spec.tags(),
            )
        )
    return requests


def evaluate_stream(
    instance: DagsterInstance, cursor: str | None, url: str, stream: StreamControl
) -> SensorResult | SkipReason:
    """One tick: gates first, then the next batches beyond the watermark and the watermark after them."""
    halted = halt_reason(url, stream)
    if halted:
        return SkipReason(halted)
    queued = queued_runs(instance)
    runs = runs_allowed(queued, stream.max_queued_runs, stream.max_runs_per_tick)
    if runs == 0:
        return SkipReason(backpressure_reason(queued, stream))
    cards = cards_needing_work(url, parse_cursor(cursor), runs * stream.batch_size, busy_card_ids(instance))
    if not cards:
        return SkipReason("no card beyond the watermark needs work")
    return SensorResult(run_requests=stream_requests(cards, stream.batch_size), cursor=format_cursor(cards[-1]))


def build_card_stream(interval_seconds: int = Settings.stream_interval_seconds) -> SensorDefinition:
    """The `card_stream` sensor, ticking at most every `interval_seconds` (`Settings.stream_interval_seconds`)."""

    @sensor(
        name="card_stream",
        job=micro_batch,
        minimum_interval_seconds=interval_seconds,
        default_status=DefaultSensorStatus.RUNNING,
        description="Requests micro-batch runs for cards that need Stage C or D, in batches, with backpressure.",
    )
    def card_stream(
        context: SensorEvaluationContext, database: AppDatabase, stream: StreamControl
    ) -> SensorResult | SkipReason:
        return evaluate_stream(context.instance, context.cursor, database.url, stream)

    return card_stream


card_stream = build_card_stream()
