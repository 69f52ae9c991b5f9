"""Jobs: `micro_batch` (Stage C -> D -> E for one batch of cards)."""

from __future__ import annotations

from dagster import AssetSelection, define_asset_job, in_process_executor

MICRO_BATCH = "micro_batch"
STAGE_ASSETS = ("image_evidence", "printing_votes", "dispatch_outcome")

micro_batch = define_asset_job(
    MICRO_BATCH,
    selection=AssetSelection.assets(*STAGE_ASSETS),
    # One process per run: stages hand data over through Postgres, and a killed run takes its OCR workers with it.
    executor_def=in_process_executor,
    tags={"stage_e/job": MICRO_BATCH},
    description="One micro-batch of cards through evidence (C), votes (D) and dispatch outcome (E).",
)
