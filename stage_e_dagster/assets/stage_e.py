"""Stage E asset `dispatch_outcome`: recompute consensus for the batch and close its ledger row `completed`.

It is the last step of `micro_batch`, so a row reads `completed` only after every stage finished; a run that
fails or is killed before this point leaves `running` (or `failed`/`halted`, set by the run-failure sensor).
"""

from datetime import UTC, datetime

from dagster import AssetExecutionContext, MaterializeResult, asset

from stage_e_dagster.assets.batch import batch_from_run_config, policy_from_run_config
from stage_e_dagster.db import ledger
from stage_e_dagster.db.consensus_store import in_transaction, recompute_consensus
from stage_e_dagster.db.engine import get_engine
from stage_e_dagster.resources.database import AppDatabase
from stage_e_dagster.resources.envelope import Envelope


@asset(group_name="stage_e", deps=["printing_votes"], description=__doc__)
def dispatch_outcome(context: AssetExecutionContext, database: AppDatabase, envelope: Envelope) -> MaterializeResult:
    batch = batch_from_run_config(context.run.run_config)
    envelope.check(mode=batch.mode)
    url, run_id = database.url, context.run.run_id
    policy = policy_from_run_config(context.run.run_config)
    result, _ = in_transaction(get_engine(url), lambda conn: recompute_consensus(conn, batch.card_ids, policy))
    row = ledger.get(url, run_id)
    elapsed = (datetime.now(UTC) - row.started_at).total_seconds() if row else None
    stage_e = {
        "policy": policy,
        "resolved": result.resolved,
        "no_match": result.no_match,
        "unresolved": result.unresolved,
        "newly_resolved": result.newly_resolved,
        "elapsed_seconds": round(elapsed, 3) if elapsed is not None else None,
    }
    closed = ledger.close(url, run_id, "completed", {"stage_e": stage_e})
    if not closed:
        context.log.warning(f"ledger row for {run_id} was missing or already closed; left as it was")
    return MaterializeResult(metadata={**stage_e, "ledger_closed": closed, "cards": len(batch.card_ids)})
