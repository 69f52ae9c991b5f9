"""Operator controls for the card stream sensor and the backstop sweep: on/off, batch size, backpressure, and how
long a silent batch may stay `running` before it is reclaimed. Every default is a `Settings` field."""

from __future__ import annotations

from dagster import ConfigurableResource
from pydantic import Field

from stage_e_dagster.settings import Settings


class StreamControl(ConfigurableResource):
    """How much work the stream and the sweep may start. Both read it on every tick."""

    enabled: bool = Field(default=Settings.streaming, description="Off: the sensor and the sweep request nothing.")
    batch_size: int = Field(default=Settings.batch_size, ge=1, description="Cards per micro-batch run.")
    max_runs_per_tick: int = Field(default=Settings.max_runs_per_tick, ge=1,
                                   description="Runs one sensor tick may request.")
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
