"""The backstop sweep schedule: walks the sweep cursors and requests batches for whatever the stream missed.

`stage_c` and `stage_d` walk the work queue's cards owed that stage; each tick claims one bounded chunk per cursor
by compare-and-swap (so concurrent sweepers never take the same cards) and turns it into batches. Each tick also
re-checks one window of card ids against the full work rule and mends any drift of the work queue (`reconcile`).
While a draining run is going the sweep requests nothing (the draining run claims whatever is owed, and two ways of
taking the same cards would only race). The cron and timezone come from the settings when the definitions load.
"""

from __future__ import annotations

from collections.abc import Callable

from dagster import (
    DagsterInstance,
    DagsterInvalidDefinitionError,
    DefaultScheduleStatus,
    RunRequest,
    ScheduleDefinition,
    ScheduleEvaluationContext,
    SkipReason,
    schedule,
)
from sqlalchemy import Engine

from stage_e_dagster.control.gates import backpressure_reason, halt_reason
from stage_e_dagster.control.run_queue import active_drains, busy_card_ids, queued_runs
from stage_e_dagster.db.work.queue import SweepClaim, claim_sweep_range, reconcile_next
from stage_e_dagster.domain.batching import split_batches, sweep_run_key
from stage_e_dagster.job_contracts import BatchSpec
from stage_e_dagster.jobs import micro_batch
from stage_e_dagster.resources.database import AppDatabase
from stage_e_dagster.resources.stream import StreamControl
from stage_e_dagster.settings import Settings, var_name

TRIGGER = "backstop-sweep"
MODE = "passive"
TAG_CURSOR = "stage_e/sweep_cursor"
SWEEP_ORDER = ("stage_d", "stage_c")
"""Cheap Stage D catch-up first, then Stage C; both share the tick's room in the queue."""


def claim_requests(claim: SweepClaim, cursor: str, batch_size: int) -> list[RunRequest]:
    """RunRequests for one claimed range; keys are distinct per (cursor, pass, range, batch)."""
    requests = []
    for index, ids in enumerate(split_batches(claim.card_ids, batch_size)):
        spec = BatchSpec(ids, trigger=TRIGGER, mode=MODE)
        requests.append(
            RunRequest(
                run_key=sweep_run_key(cursor, claim.wrap_count, claim.start, claim.end, index),
                run_config=spec.run_config(),
                tags={**spec.tags(), TAG_CURSOR: cursor},
            )
        )
    return requests


def evaluate_sweep(instance: DagsterInstance, engine: Engine, stream: StreamControl,
                   log: Callable[[str], None] = lambda message: None) -> list[RunRequest] | SkipReason:
    """One tick: re-check one window of cards against the work rules, then (gates permitting) one chunk per
    cursor, never more runs than the queue has room for."""
    reconciled = reconcile_next(engine, stream.reconcile_window)
    if reconciled is not None and reconciled.mended:
        log(f"reconcile: {reconciled.mended} cards in ids ({reconciled.start}, {reconciled.end}] had the wrong "
            "work state; mended")
    halted = halt_reason(engine, stream.enabled)
    if halted:
        return SkipReason(halted)
    drains = active_drains(instance)
    if drains:
        return SkipReason(f"{drains} draining run(s) are taking the owed cards")
    queued = queued_runs(instance)
    room = stream.max_queued_runs - queued
    if room <= 0:
        return SkipReason(backpressure_reason(queued, stream.max_queued_runs))
    requests: list[RunRequest] = []
    busy = busy_card_ids(instance, engine)
    for cursor in SWEEP_ORDER:
        runs_left = room - len(requests)
        if runs_left <= 0:
            break
        chunk = min(stream.sweep_chunk, runs_left * stream.batch_size)
        claim = claim_sweep_range(engine, cursor, chunk, busy=busy)
        requests.extend(claim_requests(claim, cursor, stream.batch_size))
    if not requests:
        return SkipReason("the sweep found no card needing work in its next ranges")
    return requests


def build_backstop_sweep(cron: str = Settings.sweep_cron, timezone: str = Settings.sweep_timezone
                         ) -> ScheduleDefinition:
    """The `backstop_sweep` schedule (`Settings.sweep_cron` / `Settings.sweep_timezone`); a bad cron or time zone
    is a ValueError naming the variables to set."""
    try:
        return _define(cron, timezone)
    except DagsterInvalidDefinitionError as err:
        raise ValueError(
            f"backstop sweep: {err} (set {var_name('sweep_cron')} / {var_name('sweep_timezone')})"
        ) from err


def _define(cron: str, timezone: str) -> ScheduleDefinition:
    @schedule(
        name="backstop_sweep",
        job=micro_batch,
        cron_schedule=cron,
        execution_timezone=timezone,
        default_status=DefaultScheduleStatus.RUNNING,
        description="Sweeps the card table for cards the stream missed and requests batches for them.",
    )
    def backstop_sweep(
        context: ScheduleEvaluationContext, database: AppDatabase, stream: StreamControl
    ) -> list[RunRequest] | SkipReason:
        return evaluate_sweep(context.instance, database.engine, stream, log=context.log.warning)

    return backstop_sweep


backstop_sweep = build_backstop_sweep()
