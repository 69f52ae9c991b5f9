"""Stage C asset `image_evidence`: opens the batch's ledger row, then extracts evidence on slot-holding workers."""

from pathlib import Path

from dagster import AssetExecutionContext, Config, MaterializeResult, RetryRequested, asset
from pydantic import Field

from stage_e_dagster.db import ledger
from stage_e_dagster.jobs import IMAGE_EVIDENCE, MODES, TRIGGERS
from stage_e_dagster.resources.database import AppDatabase
from stage_e_dagster.resources.envelope import Envelope
from stage_e_dagster.resources.ocr_engine import OcrSettings
from stage_e_dagster.resources.ocr_slots import OcrSlots
from stage_e_dagster.stages.stage_c import run_stage_c
from stage_e_dagster.workers.ocr_pool import PoolSettings


class ImageEvidenceConfig(Config):
    """The micro-batch: which cards, why the run started, and whether to recompute current evidence."""

    card_ids: list[int] = Field(default_factory=list, description="Card ids of the batch.")
    force: bool = Field(default=False, description="Recompute evidence even when it is current.")
    trigger: str = Field(default="manual", description=f"One of {', '.join(TRIGGERS)}.")
    mode: str = Field(default="passive", description=f"One of {', '.join(MODES)}; bulk runs skip the envelope.")


@asset(key=IMAGE_EVIDENCE, group_name="stage_c", output_required=False, description=__doc__)
def image_evidence(
    context: AssetExecutionContext,
    config: ImageEvidenceConfig,
    database: AppDatabase,
    ocr_slots: OcrSlots,
    ocr: OcrSettings,
    envelope: Envelope,
):
    if config.trigger not in TRIGGERS or config.mode not in MODES:
        raise ValueError(f"trigger must be one of {TRIGGERS} and mode one of {MODES}")
    url, run_id = database.url, context.run.run_id
    ledger.open_batch(url, run_id, config.trigger, config.mode, config.card_ids)
    envelope.check(mode=config.mode)
    settings = PoolSettings(
        workers=ocr.workers or ocr_slots.slot_count, engine=ocr.engine, slots=ocr_slots.worker_config(),
        holder=run_id, task_timeout_seconds=ocr.task_timeout_seconds,
        tessdata_prefix=Path(ocr.tessdata_prefix) if ocr.tessdata_prefix else None,
    )
    counters = run_stage_c(
        url, config.card_ids, run_id, settings, force=config.force,
        on_tick=lambda pids: envelope.maybe_check(mode=config.mode, worker_pids=pids),
        log=context.log.warning,
    )
    ledger.merge_counters(url, run_id, {"stage_c": counters.as_dict()})
    if counters.throttled:
        attempt = context.retry_number
        if attempt < ocr.throttle_retries:
            wait = ocr.backoff(attempt)
            context.log.info(f"no OCR slot free; retry {attempt + 1}/{ocr.throttle_retries} in {wait} s")
            raise RetryRequested(max_retries=ocr.throttle_retries, seconds_to_wait=wait)
        reason = f"no OCR slot free after {ocr.throttle_retries} retries; cards stay eligible for the sweep"
        ledger.close(url, run_id, "throttled", reason=reason)
        context.log.warning(reason)
        return
    yield MaterializeResult(metadata={
        "cards_in": counters.cards_in,
        "extracted": counters.extracted,
        "carried_forward": counters.carried_forward,
        "current": counters.current,
        "skipped": dict(counters.skipped),
        "not_processed": counters.not_processed,
        "slots_held": counters.slots_held,
        "cards_per_second": counters.cards_per_second,
        "elapsed_seconds": round(counters.elapsed_seconds, 2),
    })
