"""Stage E asset `dispatch_outcome`: the batch's consensus states, and its ledger row closed `completed`.

Its metadata tells the whole batch's story at a glance, under stable keys Dagster plots over time: the cards, how long
the batch took from its ledger row's opening, cards per second over the batch, the OCR workers Stage C used at most,
and the consensus states of the batch's cards.

A thin shell over `stages.stage_e.run_stage_e`. It is the last step of `micro_batch`, so a row reads `completed` only
after every stage finished; a run that fails or is killed before this point leaves `running` (or `failed`/`halted`,
set by the run-failure sensor).
"""

from typing import Any

from dagster import AssetExecutionContext, MaterializeResult, MetadataValue, asset

from stage_e_dagster.db.runs import ledger
from stage_e_dagster.job_contracts import DISPATCH_OUTCOME, PRINTING_VOTES, batch_from_run_config
from stage_e_dagster.resources.database import AppDatabase
from stage_e_dagster.resources.envelope import Envelope
from stage_e_dagster.stages.stage_e import run_stage_e


@asset(key=DISPATCH_OUTCOME, group_name="stage_e", deps=[PRINTING_VOTES], description=__doc__)
def dispatch_outcome(context: AssetExecutionContext, database: AppDatabase, envelope: Envelope) -> MaterializeResult:
    batch = batch_from_run_config(context.run.run_config)
    envelope.check(mode=batch.mode, run_id=context.run.run_id,
                   detail={"job": context.run.job_name, "step": context.asset_key.to_user_string(),
                           "mode": batch.mode, "trigger": batch.trigger, "cards": len(batch.card_ids)})
    outcome = run_stage_e(database.engine, context.run.run_id, batch.card_ids)
    if not outcome.closed:
        context.log.warning(f"ledger row for {context.run.run_id} was missing or already closed; left as it was")
    with database.engine.connect() as conn:
        row = ledger.get(conn, context.run.run_id)
    return MaterializeResult(metadata=batch_metadata(outcome.counters, len(batch.card_ids), outcome.closed,
                                                     row.counters if row else {}))


def batch_metadata(counters: dict[str, Any], cards: int, closed: bool, ledger_counters: dict[str, Any]
                   ) -> dict[str, Any]:
    """Stage E's counters plus the batch's speed and the OCR workers its Stage C used."""
    elapsed = counters.get("elapsed_seconds") or 0.0
    stage_c = ledger_counters.get("stage_c") or {}
    return {
        **counters,
        "ledger_closed": closed,
        "cards": cards,
        "batch_cards_per_second": MetadataValue.float(round(cards / elapsed, 2) if elapsed > 0 else 0.0),
        "ocr_workers_peak": MetadataValue.int(int(stage_c.get("workers_peak", 0))),
        "ocr_workers_cap": MetadataValue.int(int(stage_c.get("workers_cap", 0))),
    }
