"""Stage E asset `dispatch_outcome`: the batch's consensus states, and its ledger row closed `completed`.

A thin shell over `stages.stage_e.run_stage_e`. It is the last step of `micro_batch`, so a row reads `completed` only
after every stage finished; a run that fails or is killed before this point leaves `running` (or `failed`/`halted`,
set by the run-failure sensor).
"""

from dagster import AssetExecutionContext, MaterializeResult, asset

from stage_e_dagster.jobs import DISPATCH_OUTCOME, PRINTING_VOTES, batch_from_run_config
from stage_e_dagster.resources.database import AppDatabase
from stage_e_dagster.resources.envelope import Envelope
from stage_e_dagster.stages.stage_e import run_stage_e


@asset(key=DISPATCH_OUTCOME, group_name="stage_e", deps=[PRINTING_VOTES], description=__doc__)
def dispatch_outcome(context: AssetExecutionContext, database: AppDatabase, envelope: Envelope) -> MaterializeResult:
    batch = batch_from_run_config(context.run.run_config)
    envelope.check(mode=batch.mode)
    outcome = run_stage_e(database.url, context.run.run_id, batch.card_ids)
    if not outcome.closed:
        context.log.warning(f"ledger row for {context.run.run_id} was missing or already closed; left as it was")
    return MaterializeResult(metadata={**outcome.counters, "ledger_closed": outcome.closed,
                                       "cards": len(batch.card_ids)})
