"""Operator controls for the stream (its sensors and draining runs) and the backstop sweep: on/off, batch size,
draining runs, backpressure, and how long a silent batch may stay `running` before it is reclaimed. Every default is
a `Settings` field."""

from __future__ import annotations

from dagster import ConfigurableResource
from pydantic import Field

from stage_e_dagster.settings import Settings


class StreamControl(ConfigurableResource):
    """How much work the stream and the sweep may start. Both read it on every tick."""

    enabled: bool = Field(default=Settings.streaming, description="Off: the sensor and the sweep request nothing.")
    batch_size: int = Field(default=Settings.batch_size, ge=1, description="Cards per micro-batch run.")
    drain_runs: int = Field(default=Settings.drain_runs, ge=1,
                            description="Draining runs kept going while cards are owed.")
    drain_idle_seconds: float = Field(default=Settings.drain_idle_seconds, gt=0,
                                      description="A draining run ends after this long with nothing to claim.")
    drain_max_seconds: float = Field(default=Settings.drain_max_seconds, gt=0,
                                     description="A draining run ends after this long in all; another takes over.")
    drain_watch_seconds: float = Field(default=Settings.drain_watch_seconds, gt=0,
                                       description="A draining run syncs changed local sources this often.")
    worker_grace_seconds: float = Field(default=Settings.ocr_idle_grace_seconds, ge=0,
                                        description="A draining run releases idle OCR workers after this long.")
    inbox_read_limit: int = Field(default=Settings.inbox_read_limit, ge=1,
                                  description="Files a sync in a sensor tick or a draining run may read.")
    remote_list_seconds: float = Field(default=Settings.remote_list_seconds, gt=0,
                                       description="How long one source_inbox tick may list remote sources.")
    remote_list_interval_seconds: float = Field(
        default=Settings.remote_list_interval_seconds, gt=0,
        description="A remote source's listing starts again at most this often.")
    max_queued_runs: int = Field(default=Settings.max_queued_runs, ge=1,
                                 description="No new runs while this many micro_batch runs wait to start.")
    sweep_chunk: int = Field(default=Settings.sweep_chunk, ge=1,
                             description="Cards one sweep cursor may claim per tick.")
    reconcile_window: int = Field(default=Settings.reconcile_window, ge=1,
                                  description="Card ids the sweep re-checks against the work rules per tick.")
    reclaim_after_seconds: float = Field(
        default=Settings.reclaim_after_seconds, gt=0,
        description="A running ledger row without a heartbeat for this long is reclaimed as failed.",
    )
