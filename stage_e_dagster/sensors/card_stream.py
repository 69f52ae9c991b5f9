"""The card stream sensor: every owed card reaches a draining run, and batches that died give their cards back.

Each tick first reclaims dead batches (a `running` ledger row whose process is gone, whose Dagster run ended, or
that stopped heartbeating), then asks `control.stream.drain_requests` whether a draining run (`stream_drain`) must be
started: when cards are owed (new ones, the cards of halted, failed, throttled or reclaimed batches once their retry
wait is over), nothing gates the stream, and fewer than `STAGE_E_DRAIN_RUNS` draining runs are going. The draining
run claims the cards itself, batch by batch; this sensor never names cards. New files usually reach a draining run
without it: `source_inbox` syncs them and asks the same question, and a going draining run watches the sources.
"""

from __future__ import annotations

from collections.abc import Callable

from dagster import (
    DagsterInstance,
    DefaultSensorStatus,
    SensorDefinition,
    SensorEvaluationContext,
    SensorResult,
    SkipReason,
    sensor,
)
from sqlalchemy import Engine

from stage_e_dagster.control.reaper import reclaim_dead_batches
from stage_e_dagster.control.stream import drain_requests
from stage_e_dagster.jobs import stream_drain
from stage_e_dagster.resources.database import AppDatabase
from stage_e_dagster.resources.stream import StreamControl
from stage_e_dagster.settings import Settings


def evaluate_stream(
    instance: DagsterInstance, engine: Engine, stream: StreamControl,
    log: Callable[[str], None] = lambda message: None,
) -> SensorResult | SkipReason:
    """One tick: reclaim dead batches, then start a draining run if cards are owed and none is going."""
    for row in reclaim_dead_batches(instance, engine, stream.reclaim_after_seconds):
        log(f"reclaimed batch {row.run_id} ({len(row.card_ids)} cards): {row.failure_reason}")
    requests, message = drain_requests(instance, engine, streaming=stream.enabled, drain_runs=stream.drain_runs,
                                       asked_by="card_stream")
    if not requests:
        return SkipReason(message)
    log(message)
    return SensorResult(run_requests=requests)


def build_card_stream(interval_seconds: int = Settings.stream_interval_seconds) -> SensorDefinition:
    """The `card_stream` sensor, ticking at most every `interval_seconds` (`Settings.stream_interval_seconds`)."""

    @sensor(
        name="card_stream",
        job=stream_drain,
        minimum_interval_seconds=interval_seconds,
        default_status=DefaultSensorStatus.RUNNING,
        description="Starts a draining run (stream_drain) whenever cards are owed and none is going; reclaims "
                    "batches that died.",
    )
    def card_stream(
        context: SensorEvaluationContext, database: AppDatabase, stream: StreamControl
    ) -> SensorResult | SkipReason:
        return evaluate_stream(context.instance, database.engine, stream, log=context.log.warning)

    return card_stream


card_stream = build_card_stream()
