"""The run-failure sensor: every failed `micro_batch` run gets a truthful ledger row, envelope breaches a trip
(`control/failures.py` decides what a failure means and records it).

Deployment:
- `monitor_all_code_locations=True`: runs started with `execute_in_process` or `dagster job execute` carry no
  code-location origin, and a default run-failure sensor never fires for them in the daemon.
- Bursts: Dagster processes 5 failed runs per tick unless `DAGSTER_RUN_STATUS_SENSOR_PROCESS_LIMIT` is set in the
  *code server's* environment (`stage-e dev` sets 100); the daemon ticks at most every 5 s.
- The function returns None for every run: a returned value ends Dagster's loop over the tick's runs.
- An unreachable database (connection-level error) is re-raised as `FailureNotRecorded`, a `DagsterError`: it
  fails the whole tick without advancing the cursor, so the next tick processes the same runs again instead of
  losing them. Any other exception would be caught by Dagster, logged on the tick, and its run skipped.
"""

from __future__ import annotations

from dagster import DagsterError, DefaultSensorStatus, RunFailureSensorContext, run_failure_sensor
from sqlalchemy.exc import InterfaceError, OperationalError

from stage_e_dagster.control.failures import classify_failure, record_failure
from stage_e_dagster.job_contracts import MICRO_BATCH
from stage_e_dagster.resources.database import AppDatabase


class FailureNotRecorded(DagsterError):
    """The app database refused a failure record; the tick fails and its runs are processed again."""


@run_failure_sensor(
    name="record_run_failures",
    monitor_all_code_locations=True,
    minimum_interval_seconds=5,
    default_status=DefaultSensorStatus.RUNNING,
    description="Mark failed micro_batch runs failed/halted in the dispatch ledger and record envelope trips.",
)
def record_run_failures(context: RunFailureSensorContext, database: AppDatabase) -> None:
    """Record one failed run (called by Dagster once per failed run of any job; acts on `micro_batch` only)."""
    run = context.dagster_run
    if run.job_name != MICRO_BATCH:
        return None
    outcome = classify_failure(context.failure_event)
    try:
        trip_id = record_failure(database.engine, run.run_id, dict(run.run_config or {}), outcome, run.job_name)
    except (OperationalError, InterfaceError) as err:
        raise FailureNotRecorded(
            f"could not record the failure of run {run.run_id} ({type(err).__name__}); retrying next tick"
        ) from None
    if trip_id:
        context.log.warning(f"run {run.run_id}: {outcome.reason}; trip {trip_id} recorded, stream halted")
    else:
        context.log.info(f"run {run.run_id}: ledger {outcome.status}: {outcome.reason}")
    return None
