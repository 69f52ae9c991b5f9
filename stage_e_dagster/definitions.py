"""Dagster definitions: assets, jobs, sensors, schedules and resources. Wiring only."""

from __future__ import annotations

import os

from dagster import Definitions, EnvVar

from stage_e_dagster.assets.acknowledge import acknowledge_envelope_trip
from stage_e_dagster.assets.stage_c import image_evidence
from stage_e_dagster.assets.stage_d import printing_votes
from stage_e_dagster.assets.stage_e import dispatch_outcome
from stage_e_dagster.jobs import micro_batch
from stage_e_dagster.resources.database import AppDatabase
from stage_e_dagster.resources.envelope import Envelope
from stage_e_dagster.resources.ocr_engine import OcrSettings
from stage_e_dagster.resources.ocr_slots import OcrSlots
from stage_e_dagster.resources.stream import StreamControl
from stage_e_dagster.sensors.backstop import backstop_sweep
from stage_e_dagster.sensors.card_stream import card_stream
from stage_e_dagster.sensors.run_failures import record_run_failures

DATABASE_URL = EnvVar("STAGE_E_DATABASE_URL")


def _flag(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    return default if value is None else value.strip().lower() not in ("0", "off", "false", "no")


def _int(name: str) -> int | None:
    value = os.environ.get(name)
    return int(value) if value else None


def _float(name: str) -> float | None:
    value = os.environ.get(name)
    return float(value) if value else None


defs = Definitions(
    assets=[image_evidence, printing_votes, dispatch_outcome],
    jobs=[micro_batch, acknowledge_envelope_trip],
    sensors=[card_stream, record_run_failures],
    schedules=[backstop_sweep],
    resources={
        "database": AppDatabase(database_url=DATABASE_URL),
        # A batch waits a little for a slot before it throttles, so two queued batches on a one-slot host take
        # turns instead of churning through step retries.
        "ocr_slots": OcrSlots(database_url=DATABASE_URL, max_slots=_int("STAGE_E_OCR_MAX_SLOTS"),
                              wait_seconds=_float("STAGE_E_OCR_WAIT_SECONDS") or 10.0),
        "ocr": OcrSettings(engine=os.environ.get("STAGE_E_OCR_ENGINE", "tesserocr")),
        "envelope": Envelope(database_url=DATABASE_URL, host_load_ceiling=_float("STAGE_E_HOST_LOAD_CEILING")),
        "stream": StreamControl(
            enabled=_flag("STAGE_E_STREAMING", True),
            batch_size=_int("STAGE_E_BATCH_SIZE") or 100,
        ),
    },
)
