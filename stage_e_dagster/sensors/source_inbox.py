"""Sources by event: the `source_inbox` sensor and the daily `source_resync` schedule.

Each `source_inbox` tick lists every registered source directory (names, sizes and file times; no file is read) and
compares the listing with the one the source's last successful sync started from (`control.intake.sync_changed`).
A changed source whose quick sync reads at most `STAGE_E_INBOX_READ_LIMIT` files is synced in the tick itself, and
the tick reports it as a `card_sources` materialization; when that brought new or changed cards, the tick also asks
for a draining run (`control.stream.drain_requests`), so a dropped file reaches Stage C within one tick and one
run launch, or within a second when a draining run is already going (it watches the sources too). A bigger change
(a first sync, a large copy) gets one quick `sync_sources` run instead, which reads only the files that changed.

The cursor remembers only the sync run requested last and when (one digest per source, so its size does not grow
with the directories): while that run is queued or running nothing more is requested, and once it ended the same
listings are requested again only after `RETRY_SECONDS` (a sync that failed is retried, never hot-looped and never
forgotten: the database, not the cursor, says what was synced). A directory that is missing or unreadable is
skipped and named in the tick's message.

Remote sources (S3 prefixes, HTTP manifests) are listed in the same tick when due, within
`STAGE_E_REMOTE_LIST_SECONDS` (`control.intake.sync_remote_due`): a big S3 listing goes on from its cursor at the
next tick, a manifest too big for one tick gets a `sync_sources` run as a big directory change does.

`source_resync` re-reads every file of every source once a day (`Settings.resync_cron`): the backstop for what a
listing cannot show (a file rewritten in place with its size and both file times unchanged).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from dagster import (
    AssetMaterialization,
    DagsterInstance,
    DagsterInvalidDefinitionError,
    DefaultScheduleStatus,
    DefaultSensorStatus,
    RunRequest,
    RunsFilter,
    ScheduleDefinition,
    ScheduleEvaluationContext,
    SensorDefinition,
    SensorEvaluationContext,
    SensorResult,
    SkipReason,
    schedule,
    sensor,
)
from sqlalchemy import Engine

from stage_e_dagster.assets.sources import sources_metadata
from stage_e_dagster.control.intake import sync_changed, sync_remote_due
from stage_e_dagster.control.run_queue import ACTIVE_STATUSES
from stage_e_dagster.control.stream import drain_requests
from stage_e_dagster.domain.scan_files import Listing, list_images
from stage_e_dagster.job_contracts import CARD_SOURCES, SYNC_SOURCES, SyncSpec
from stage_e_dagster.jobs import stream_drain, sync_sources
from stage_e_dagster.remote.listing import Opener
from stage_e_dagster.resources.database import AppDatabase
from stage_e_dagster.resources.stream import StreamControl
from stage_e_dagster.settings import Settings, var_name

RETRY_SECONDS = 300.0
"""After a requested sync ended without bringing the listings in, the same listings are requested again this late."""


@dataclass(frozen=True)
class InboxCursor:
    """The last request: source key -> listing digest asked for, and when (POSIX seconds)."""

    requested: Mapping[str, str]
    at: float

    @staticmethod
    def parse(raw: str | None) -> InboxCursor:
        try:
            data = json.loads(raw or "")
            return InboxCursor({str(k): str(v) for k, v in data["requested"].items()}, float(data["at"]))
        except (ValueError, TypeError, KeyError, AttributeError):
            return InboxCursor({}, 0.0)

    def dump(self) -> str:
        return json.dumps({"requested": dict(sorted(self.requested.items())), "at": round(self.at, 3)})


@dataclass(frozen=True)
class InboxTick:
    """What one tick found: sources whose listing differs from their last sync, and sources that are unavailable."""

    changed: dict[str, str]
    unavailable: list[str]
    unchanged: int


def decide(tick: InboxTick, cursor: InboxCursor, sync_active: bool, now: float
           ) -> tuple[RunRequest | None, InboxCursor, str]:
    """The run to request (or None), the cursor to keep, and what the tick says."""
    gone = f"; unavailable: {', '.join(tick.unavailable)}" if tick.unavailable else ""
    if not tick.changed:
        return None, cursor, f"{tick.unchanged} source(s) unchanged since their last sync{gone}"
    names = ", ".join(sorted(tick.changed))
    if sync_active:
        return None, cursor, f"changed: {names}; a {SYNC_SOURCES} run is already queued or running{gone}"
    if dict(cursor.requested) == tick.changed and now - cursor.at < RETRY_SECONDS:
        wait = RETRY_SECONDS - (now - cursor.at)
        return None, cursor, (f"changed: {names}; the sync requested {now - cursor.at:.0f} s ago did not take them "
                              f"in; asking again in {wait:.0f} s{gone}")
    spec = SyncSpec(tuple(sorted(tick.changed)))
    signature = hashlib.blake2b(json.dumps(sorted(tick.changed.items())).encode(), digest_size=6).hexdigest()
    request = RunRequest(run_key=f"source_inbox:{signature}:{int(now)}", run_config=spec.run_config(),
                         tags=spec.tags(), job_name=SYNC_SOURCES)
    return request, InboxCursor(dict(tick.changed), now), f"sync requested for {names}{gone}"


def sync_running(instance: DagsterInstance) -> bool:
    """A `sync_sources` run is queued or under way."""
    return instance.get_runs_count(RunsFilter(job_name=SYNC_SOURCES, statuses=ACTIVE_STATUSES)) > 0


def evaluate_inbox(instance: DagsterInstance, engine: Engine, stream: StreamControl, cursor: str | None,
                   now: float | None = None,
                   list_dir: Callable[[Path, float | None], Listing | None] = list_images,
                   log: Callable[[str], None] = lambda message: None,
                   open_store: Opener | None = None) -> SensorResult | SkipReason:
    """One `source_inbox` tick: sync the small changes here, list the remote sources that are due, request a sync
    run for a big change, and a draining run when new cards came in."""
    started = time.monotonic()
    intake = sync_changed(engine, stream.inbox_read_limit, list_dir).merge(
        sync_remote_due(engine, stream.remote_list_seconds, stream.remote_list_interval_seconds, open_store))
    if not (intake.synced or intake.too_big or intake.unavailable or intake.unchanged):
        return SkipReason("no source registered (stage-e sources add DIR --key K)")
    events = [AssetMaterialization(asset_key=CARD_SOURCES, description="synced by the source_inbox sensor",
                                   metadata=sources_metadata(intake.synced, time.monotonic() - started))
              ] if intake.synced else []
    tick = InboxTick(intake.too_big, intake.unavailable, intake.unchanged)
    previous = InboxCursor.parse(cursor)
    active = bool(tick.changed) and sync_running(instance)
    request, kept, decided = decide(tick, previous, active, time.time() if now is None else now)
    requests = [request] if request is not None else []
    message = intake.describe() if intake.synced else decided
    if intake.new_cards:
        drains, why = drain_requests(instance, engine, streaming=stream.enabled, drain_runs=stream.drain_runs,
                                     asked_by="source_inbox")
        requests += drains
        message = f"{message}; {why}"
    if not requests and not events:
        return SkipReason(message)
    log(message)
    return SensorResult(run_requests=requests, asset_events=events, cursor=kept.dump())


def build_source_inbox(interval_seconds: int = Settings.inbox_interval_seconds) -> SensorDefinition:
    """The `source_inbox` sensor, ticking at most every `interval_seconds` (`Settings.inbox_interval_seconds`)."""

    @sensor(
        name="source_inbox",
        jobs=[sync_sources, stream_drain],
        minimum_interval_seconds=interval_seconds,
        default_status=DefaultSensorStatus.RUNNING,
        description="Syncs the source directories whose files appeared, changed or vanished (a big change through a "
                    "sync_sources run), lists the remote sources that are due, and starts a draining run for the "
                    "new cards.",
    )
    def source_inbox(context: SensorEvaluationContext, database: AppDatabase,
                     stream: StreamControl) -> SensorResult | SkipReason:
        return evaluate_inbox(context.instance, database.engine, stream, context.cursor, log=context.log.info)

    return source_inbox


def build_source_resync(cron: str = Settings.resync_cron, timezone: str = Settings.sweep_timezone
                        ) -> ScheduleDefinition:
    """The daily `source_resync` schedule: a full sync of every source."""
    try:
        @schedule(
            name="source_resync",
            job=sync_sources,
            cron_schedule=cron,
            execution_timezone=timezone,
            default_status=DefaultScheduleStatus.RUNNING,
            description="Re-reads every file of every source (the backstop for what a listing cannot show).",
        )
        def source_resync(context: ScheduleEvaluationContext) -> RunRequest:
            spec = SyncSpec(full=True)
            return RunRequest(run_config=spec.run_config(), tags=spec.tags())
    except DagsterInvalidDefinitionError as err:
        raise ValueError(f"source re-sync: {err} (set {var_name('resync_cron')} / "
                         f"{var_name('sweep_timezone')})") from err
    return source_resync
