"""The card stream sensor: requests micro-batch runs for cards that need Stage C or D, as they arrive.

Its cursor is a watermark over (card.updated_at, card.id): ingest bumps `updated_at` when a file's bytes change,
which is how stale evidence re-opens a card. Each tick takes the next cards beyond the watermark that need
work, groups them into batches, and moves the watermark only past the cards it requested. Gates shared with the
backstop sweep (`halt_reason`, `queued_runs`) live here too: streaming switched off, any open envelope trip,
or a full run queue start nothing.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime

from dagster import (
    DagsterInstance,
    DagsterRunStatus,
    DefaultSensorStatus,
    RunRequest,
    RunsFilter,
    SensorDefinition,
    SensorEvaluationContext,
    SensorResult,
    SkipReason,
    sensor,
)

from stage_e_dagster.assets.batch import BatchSpec, batch_from_run_config
from stage_e_dagster.db.stream import StreamCard, cards_needing_work
from stage_e_dagster.db.trips import open_trips
from stage_e_dagster.domain.batching import batch_tags, runs_allowed, split_batches, stream_run_key
from stage_e_dagster.resources.database import AppDatabase
from stage_e_dagster.resources.stream import StreamControl

MICRO_BATCH_JOB = "micro_batch"
WAITING_STATUSES = [DagsterRunStatus.QUEUED, DagsterRunStatus.NOT_STARTED, DagsterRunStatus.STARTING]
ACTIVE_STATUSES = [*WAITING_STATUSES, DagsterRunStatus.STARTED]
"""Run statuses that count as waiting in the queue for backpressure."""
INTERVAL_VAR = "STAGE_E_STREAM_INTERVAL_SECONDS"
DEFAULT_INTERVAL_SECONDS = 15
TRIGGER = "card-event"
MODE = "passive"

Watermark = tuple[datetime, int]


def halt_reason(url: str, stream: StreamControl) -> str | None:
    """Why nothing may start now (streaming disabled, an open envelope trip), or None when work may start."""
    if not stream.enabled:
        return "streaming is disabled (StreamControl.enabled is false)"
    trips = open_trips(url)
    if trips:
        first = trips[0]
        more = f" (and {len(trips) - 1} more)" if len(trips) > 1 else ""
        return (
            f"envelope trip {first.id} is open{more}: bar {first.bar} tripped by run {first.run_id}; "
            "nothing starts until an operator acknowledges it"
        )
    return None


def queued_runs(instance: DagsterInstance) -> int:
    """Micro-batch runs waiting to start (queued, not started, starting)."""
    return instance.get_runs_count(RunsFilter(job_name=MICRO_BATCH_JOB, statuses=WAITING_STATUSES))


def busy_card_ids(instance: DagsterInstance, limit: int = 200) -> set[int]:
    """Cards already in a micro-batch run that is queued or under way; neither the stream nor the sweep asks
    for them again (the ledger only knows a batch once its run has started)."""
    runs = instance.get_runs(RunsFilter(job_name=MICRO_BATCH_JOB, statuses=ACTIVE_STATUSES), limit=limit)
    return {card for run in runs for card in batch_from_run_config(run.run_config).card_ids}


def backpressure_reason(queued: int, stream: StreamControl) -> str:
    return (
        f"backpressure: {queued} {MICRO_BATCH_JOB} runs already wait in the queue "
        f"(max_queued_runs={stream.max_queued_runs})"
    )


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
        ids = tuple(card.id for card in batch)
        requests.append(
            RunRequest(
                run_key=stream_run_key([(card.id, card_version(card)) for card in batch]),
                run_config=BatchSpec(ids, trigger=TRIGGER, mode=MODE).run_config(),
                tags=batch_tags(TRIGGER, MODE, ids),
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


def build_card_stream(minimum_interval_seconds: int | None = None) -> SensorDefinition:
    """The `card_stream` sensor; the interval defaults to `$STAGE_E_STREAM_INTERVAL_SECONDS`, else 15 s."""
    interval = minimum_interval_seconds or int(os.environ.get(INTERVAL_VAR) or DEFAULT_INTERVAL_SECONDS)

    @sensor(
        name="card_stream",
        job_name=MICRO_BATCH_JOB,
        minimum_interval_seconds=interval,
        default_status=DefaultSensorStatus.RUNNING,
        description="Requests micro-batch runs for cards that need Stage C or D, in batches, with backpressure.",
    )
    def card_stream(
        context: SensorEvaluationContext, database: AppDatabase, stream: StreamControl
    ) -> SensorResult | SkipReason:
        return evaluate_stream(context.instance, context.cursor, database.url, stream)

    return card_stream


card_stream = build_card_stream()
