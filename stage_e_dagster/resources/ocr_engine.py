"""How Stage C runs OCR: which engine, how many worker processes, and how long to back off when throttled."""

from __future__ import annotations

import random

from dagster import ConfigurableResource
from pydantic import Field

from stage_e_dagster.domain.evidence.ocr import ENGINE_NAMES
from stage_e_dagster.settings import Settings


class OcrSettings(ConfigurableResource):
    """Stage C's OCR settings. Workers beyond the free OCR slots exit at once, so `workers` is an upper bound."""

    engine: str = Field(default=Settings.ocr_engine, description=f"One of {', '.join(ENGINE_NAMES)}.")
    rescue: str = Field(default=Settings.ocr_rescue,
                        description="Second engine for the number Tesseract cannot read: rapidocr or none.")
    tessdata_prefix: str | None = Field(default=None, description="Directory searched first for language data.")
    workers: int | None = Field(default=Settings.ocr_workers,
                                description="Worker processes per batch; default: the slot cap.")
    task_timeout_seconds: float = Field(
        default=Settings.ocr_task_timeout_seconds,
        description="A card whose extraction takes longer is abandoned (skip `extraction-timeout`)."
    )
    throttle_retries: int = Field(default=Settings.ocr_throttle_retries,
                                  description="Step retries while no OCR slot is free.")
    throttle_backoff_seconds: float = Field(default=Settings.ocr_throttle_backoff_seconds,
                                            description="First retry delay; doubles per attempt.")

    def backoff(self, attempt: int, rng: random.Random | None = None) -> int:
        """Jittered exponential backoff (whole seconds, at least 1) before throttle retry number `attempt`."""
        base = self.throttle_backoff_seconds * (2 ** max(0, attempt))
        jitter = (rng or random).uniform(0.5, 1.5)
        return max(1, round(min(base, 600.0) * jitter))
