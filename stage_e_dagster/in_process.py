"""Micro-batch runs in this process: claim a batch, run the `micro_batch` job on it here, and say how it ended.

`stage-e run` (`bulk.py`) and draining runs (`ops/drain.py`) work this way. A claim takes the cards and opens the
batch's `running` row before the run exists (`db.runs.ledger.claim_batch`), under the run id the run then gets, so
no other claim takes the same cards and the reaper knows the batch from its first moment. The run is recorded in
the given Dagster instance, so it shows in the UI like any other; a failed one is recorded at once as the
run-failure sensor would (`control.failures.record_in_process_failure`), since the sensor may not be running.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from contextlib import suppress

from dagster import DagsterInstance, JobDefinition
from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError

from stage_e_dagster.control.drain import Claim
from stage_e_dagster.control.failures import record_in_process_failure
from stage_e_dagster.control.run_queue import busy_card_ids
from stage_e_dagster.db.runs import ledger
from stage_e_dagster.db.work.queue import has_offered
from stage_e_dagster.job_contracts import BatchSpec

QUIET = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}
"""Per-event DEBUG lines would bury the caller's own output; the events are still stored and shown in the UI."""


def claim(engine: Engine, instance: DagsterInstance, *, trigger: str, mode: str, limit: int, owner: str,
          after_id: int | None = None) -> Claim | None:
    """Take up to `limit` offered cards (beyond `after_id`) for a new run id, or None when nothing is offered.
    Cards already in a queued or started run (the sweep's) are left out."""
    with engine.connect() as conn:
        if not has_offered(conn, after_id):
            return None
    busy = busy_card_ids(instance, engine)
    run_id = str(uuid.uuid4())
    with engine.begin() as conn:
        cards = ledger.claim_batch(conn, run_id, trigger, mode, limit, busy=busy, owner=owner, after_id=after_id)
    return Claim(run_id, tuple(card.id for card in cards)) if cards else None


def run_claim(job: JobDefinition, instance: DagsterInstance, engine: Engine, claimed: Claim, spec: BatchSpec,
              tags: Mapping[str, str] | None = None) -> tuple[str, bool]:
    """Run the claimed batch as one `micro_batch` run under its claim's run id; (its ledger status, success)."""
    try:
        result = job.execute_in_process(run_config={**spec.run_config(), **QUIET}, instance=instance,
                                        raise_on_error=False, run_id=claimed.run_id,
                                        tags={**spec.tags(), **(tags or {})})
    except Exception as err:  # noqa: BLE001 - the run could not even start: its claim must not stay running
        reason = f"the batch's run could not start: {type(err).__name__}: {str(err)[:300]}"
        with suppress(SQLAlchemyError):  # the database itself may be what failed: the reaper closes the row later
            with engine.begin() as conn:
                ledger.mark_failed(conn, claimed.run_id, "failed", reason, spec.trigger, spec.mode, claimed.card_ids)
        raise
    if not result.success:
        return record_in_process_failure(engine, result, spec), False
    with engine.connect() as conn:
        row = ledger.get(conn, claimed.run_id)
    return (row.status if row else "missing"), True
