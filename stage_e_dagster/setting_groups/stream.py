"""Settings of the stream: micro-batches, draining runs, and the cadence of the sensors and schedules."""

from __future__ import annotations

from dataclasses import dataclass

from stage_e_dagster.setting_groups.declare import flag, non_negative_float, positive_float, positive_int, setting


@dataclass(frozen=True)
class StreamSettings:
    """The stream's micro-batches and draining runs: batch size, backpressure, reclaiming silent batches,
    and how long a draining run lives, watches and keeps its OCR workers."""

    reclaim_after_seconds: float = setting(
        "STAGE_E_RECLAIM_AFTER_SECONDS", 300.0, "a `running` batch silent this long is reclaimed as `failed` and its "
        "cards offered again", positive_float, shown="300")
    streaming: bool = setting(
        "STAGE_E_STREAMING", True, "`off` makes the sensor and the sweep request nothing", flag, shown="on")
    batch_size: int = setting(
        "STAGE_E_BATCH_SIZE", 250, "cards per micro-batch run (stream, sweep and `stage-e run`); 250 keeps "
        "Dagster's cost per run near 5% of a batch (docs/performance.md)", positive_int)
    max_queued_runs: int = setting(
        "STAGE_E_MAX_QUEUED_RUNS", 8, "backpressure: the sweep requests no new run while this many micro-batch runs "
        "wait to start", positive_int)
    drain_runs: int = setting(
        "STAGE_E_DRAIN_RUNS", 1, "draining runs (`stream_drain`) the stream keeps going while cards are owed; each "
        "claims cards atomically, so more than one is safe (one per host's OCR slots is plenty)", positive_int)
    drain_idle_seconds: float = setting(
        "STAGE_E_DRAIN_IDLE_SECONDS", 300.0, "a draining run ends after this long with nothing to claim (the stream "
        "starts another when cards arrive)", positive_float, shown="300")
    drain_max_seconds: float = setting(
        "STAGE_E_DRAIN_MAX_SECONDS", 1800.0, "a draining run ends after this long in all and another takes over "
        "(keep it under run monitoring's `max_runtime_seconds`)", positive_float, shown="1800")
    drain_watch_seconds: float = setting(
        "STAGE_E_DRAIN_WATCH_SECONDS", 1.0, "while a draining run is going, it compares the local source "
        "directories' listings with the last sync this often and syncs a changed one itself", positive_float,
        shown="1")
    ocr_idle_grace_seconds: float = setting(
        "STAGE_E_OCR_IDLE_GRACE_SECONDS", 10.0, "a draining run keeps its OCR workers (and their slots) warm between "
        "claims, and releases them after this long with nothing to do, so an idle stream never keeps a bulk run or "
        "another host from a slot for longer", non_negative_float, shown="10")


@dataclass(frozen=True)
class ScheduleSettings:
    """How often the sensors tick and the schedules run (stream, sweep, inbox, re-sync, checks), and what
    the sweep and the checks take on."""

    stream_interval_seconds: int = setting(
        "STAGE_E_STREAM_INTERVAL_SECONDS", 10, "`card_stream` interval: how often it reclaims dead batches and makes "
        "sure a draining run takes the owed cards", positive_int)
    sweep_cron: str = setting(
        "STAGE_E_SWEEP_CRON", "*/30 * * * *", "backstop sweep schedule (cron)", shown="`*/30 * * * *`")
    sweep_timezone: str = setting(
        "STAGE_E_SWEEP_TIMEZONE", "UTC", "time zone of every schedule's cron (sweep, source re-sync, checks)",
        shown="UTC")
    sweep_chunk: int = setting(
        "STAGE_E_SWEEP_CHUNK", 1000, "cards one sweep cursor may claim per tick", positive_int)
    reconcile_window: int = setting(
        "STAGE_E_RECONCILE_WINDOW", 20_000, "card ids each sweep tick re-checks against the full work rule (mending "
        "any drift of the work queue)", positive_int, shown="20000")
    inbox_interval_seconds: int = setting(
        "STAGE_E_INBOX_INTERVAL_SECONDS", 5, "`source_inbox` interval: how often the source directories' listings "
        "are compared with the last one synced (a changed one is synced in the tick)", positive_int)
    resync_cron: str = setting(
        "STAGE_E_RESYNC_CRON", "0 3 * * *", "`source_resync` schedule (cron): a full re-sync of every source, "
        "re-reading every file", shown="`0 3 * * *`")
    checks_cron: str = setting(
        "STAGE_E_CHECKS_CRON", "*/10 * * * *", "`invariant_checks` schedule (cron): runs every asset check",
        shown="`*/10 * * * *`")
    trip_max_open_seconds: float = setting(
        "STAGE_E_TRIP_MAX_OPEN_SECONDS", 3600.0, "the `no_stale_open_trip` check fails once an envelope trip stayed "
        "open this long", positive_float, shown="3600")
