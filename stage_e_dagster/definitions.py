"""Dagster definitions: assets, jobs, sensors, schedules and resources, configured from `Settings`. Wiring only."""

from __future__ import annotations

from dagster import Definitions, EnvVar

from stage_e_dagster.assets.checks import ASSET_CHECKS
from stage_e_dagster.assets.sources import card_sources
from stage_e_dagster.assets.stage_c import image_evidence
from stage_e_dagster.assets.stage_d import printing_votes
from stage_e_dagster.assets.stage_e import dispatch_outcome
from stage_e_dagster.jobs import acknowledge_envelope_trip, invariant_checks, micro_batch, stream_drain, sync_sources
from stage_e_dagster.resources.consensus import Consensus
from stage_e_dagster.resources.database import AppDatabase
from stage_e_dagster.resources.envelope import Envelope
from stage_e_dagster.resources.ocr_engine import OcrSettings
from stage_e_dagster.resources.ocr_slots import OcrSlots
from stage_e_dagster.resources.remote import RemoteFetch
from stage_e_dagster.resources.stream import StreamControl
from stage_e_dagster.sensors.backstop import build_backstop_sweep
from stage_e_dagster.sensors.card_stream import build_card_stream
from stage_e_dagster.sensors.checks import build_invariant_checks
from stage_e_dagster.sensors.run_failures import record_run_failures
from stage_e_dagster.sensors.source_inbox import build_source_inbox, build_source_resync
from stage_e_dagster.settings import Settings, review_page_url, var_name


def build_definitions(settings: Settings) -> Definitions:
    """The code location for `settings`. The database URL stays an `EnvVar`: a secret never stored in config."""
    database = AppDatabase(database_url=EnvVar(var_name("database_url")))
    return Definitions(
        assets=[card_sources, image_evidence, printing_votes, dispatch_outcome],
        asset_checks=ASSET_CHECKS,
        jobs=[micro_batch, stream_drain, sync_sources, invariant_checks, acknowledge_envelope_trip],
        sensors=[build_card_stream(settings.stream_interval_seconds), record_run_failures,
                 build_source_inbox(settings.inbox_interval_seconds)],
        schedules=[build_backstop_sweep(settings.sweep_cron, settings.sweep_timezone),
                   build_source_resync(settings.resync_cron, settings.sweep_timezone),
                   build_invariant_checks(settings.checks_cron, settings.sweep_timezone)],
        resources={
            "database": database,
            # A batch waits a little for a slot before it throttles, so two queued batches on a one-slot host take
            # turns instead of churning through step retries.
            "ocr_slots": OcrSlots.from_settings(settings, database),
            "ocr": OcrSettings(engine=settings.ocr_engine, rescue=settings.ocr_rescue,
                               tessdata_prefix=str(settings.tessdata_prefix) if settings.tessdata_prefix else None,
                               workers=settings.ocr_workers, task_timeout_seconds=settings.ocr_task_timeout_seconds,
                               throttle_retries=settings.ocr_throttle_retries,
                               throttle_backoff_seconds=settings.ocr_throttle_backoff_seconds),
            "envelope": Envelope(database=database, host_load_ceiling=settings.host_load_ceiling,
                                 rss_ceiling_mb=settings.rss_ceiling_mb, load_target=settings.load_target,
                                 failure_rate_ceiling=settings.image_failure_rate_ceiling,
                                 failure_window=settings.image_failure_window,
                                 failure_min_loads=settings.image_failure_min_loads,
                                 sample_interval_seconds=settings.envelope_sample_seconds,
                                 trip_max_open_seconds=settings.trip_max_open_seconds),
            "stream": StreamControl(enabled=settings.streaming, batch_size=settings.batch_size,
                                    drain_runs=settings.drain_runs, drain_idle_seconds=settings.drain_idle_seconds,
                                    drain_max_seconds=settings.drain_max_seconds,
                                    drain_watch_seconds=settings.drain_watch_seconds,
                                    worker_grace_seconds=settings.ocr_idle_grace_seconds,
                                    inbox_read_limit=settings.inbox_read_limit,
                                    remote_list_seconds=settings.remote_list_seconds,
                                    remote_list_interval_seconds=settings.remote_list_interval_seconds,
                                    max_queued_runs=settings.max_queued_runs, sweep_chunk=settings.sweep_chunk,
                                    reconcile_window=settings.reconcile_window,
                                    reclaim_after_seconds=settings.reclaim_after_seconds),
            "consensus": Consensus(policy=settings.consensus_policy, review_page_url=review_page_url(settings)),
            "remote": RemoteFetch(rate=settings.fetch_rate, jitter_seconds=settings.fetch_jitter_seconds,
                                  concurrency=settings.fetch_concurrency,
                                  timeout_seconds=settings.fetch_timeout_seconds, max_bytes=settings.fetch_max_bytes,
                                  lockout_forbidden=settings.fetch_lockout_403s,
                                  broken_retries=settings.fetch_broken_retries,
                                  recover_after=settings.fetch_recover_after,
                                  fallback_share=settings.fetch_fallback_share,
                                  cache_dir=str(settings.fetch_cache) if settings.fetch_cache else None),
        },
    )


defs = build_definitions(Settings.from_env())
