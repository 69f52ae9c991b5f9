"""The run-failure sensor: every failed `micro_batch` run gets a truthful ledger row, envelope breaches a trip.

An envelope breach (the first step failure is an `EnvelopeTripped`) records one `envelope_trip` row for the run
and marks its ledger row `halted`; any other failure, including a run whose worker was killed (the failure event
then carries no data), marks it `failed` with the reason. Both writes are idempotent, so re-processing an event
changes nothing.

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

from dataclasses import dataclass

from dagster import DagsterError, DagsterEvent, DefaultSensorStatus, RunFailureSensorContext, run_failure_sensor
from sqlalchemy.exc import InterfaceError, OperationalError

from stage_e_dagster.db.runs import ledger, trips
from stage_e_dagster.jobs import MICRO_BATCH, BatchSpec, batch_from_run_config
from stage_e_dagster.resources.database import AppDatabase

ENVELOPE_FAILURE = "EnvelopeTripped"
CRASH_REASON = "run worker crashed or was killed"
MAX_REASON = 2000
WRAPPER_ERRORS = ("DagsterExecutionStepExecutionError", "DagsterUserCodeExecutionError")


class FailureNotRecorded(DagsterError):
    """The app database refused a failure record; the tick fails and its runs are processed again."""


@dataclass(frozen=True)
class FailureOutcome:
    """What a failed run means for the ledger: `halted` with a trip, or `failed` with a reason."""

    status: str
    reason: str
    bar: str | None = None
    observed: float | None = None
    ceiling: float | None = None
    step_key: str | None = None


def classify_failure(failure_event: DagsterEvent) -> FailureOutcome:
    """Read a RUN_FAILURE event: an envelope breach, a step error, or a crash (no event data)."""
    data = failure_event.event_specific_data
    if data is None:
        return FailureOutcome("failed", CRASH_REASON)
    step_event = getattr(data, "first_step_failure_event", None)
    if step_event is None:
        error = getattr(data, "error", None)
        if error is not None:
            return FailureOutcome("failed", _trim(_error_text(error)))
        why = getattr(data, "failure_reason", None)
        return FailureOutcome("failed", _trim(f"run failed ({why.value if why else 'no reason given'})"))
    step_data = step_event.event_specific_data
    error = getattr(step_data, "error", None)
    step = step_event.step_key
    if error is not None and error.cls_name == ENVELOPE_FAILURE:
        user_data = getattr(step_data, "user_failure_data", None)
        metadata = {k: getattr(v, "value", v) for k, v in ((user_data.metadata if user_data else None) or {}).items()}
        bar = str(metadata.get("bar") or "unknown")
        observed, ceiling = _number(metadata.get("observed")), _number(metadata.get("ceiling"))
        reason = f"envelope tripped in step {step}: {bar} observed {observed} > ceiling {ceiling}"
        return FailureOutcome("halted", _trim(reason), bar, observed, ceiling, step)
    text = _error_text(error) if error is not None else step_event.message or "step failed"
    return FailureOutcome("failed", _trim(f"step {step} failed: {text}"), step_key=step)


def record_failure(url: str, run_id: str, run_config: dict, outcome: FailureOutcome, job_name: str) -> str | None:
    """Write the trip (envelope breaches) and the ledger status; returns the new trip id, if one was recorded."""
    batch = _batch(run_config)
    trigger, mode = batch.trigger[:32], batch.mode[:16]
    trip_id = None
    if outcome.status == "halted":
        detail = {"job": job_name, "step": outcome.step_key, "mode": mode, "trigger": trigger,
                  "cards": len(batch.card_ids)}
        bar = (outcome.bar or "unknown")[:32]
        trip_id = trips.record_trip(url, run_id, bar, outcome.observed, outcome.ceiling, detail)
    ledger.mark_failed(url, run_id, outcome.status, outcome.reason, trigger, mode, batch.card_ids)
    return trip_id


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
        trip_id = record_failure(database.url, run.run_id, dict(run.run_config or {}), outcome, run.job_name)
    except (OperationalError, InterfaceError) as err:
        raise FailureNotRecorded(
            f"could not record the failure of run {run.run_id} ({type(err).__name__}); retrying next tick"
        ) from None
    if trip_id:
        context.log.warning(f"run {run.run_id}: {outcome.reason}; trip {trip_id} recorded, stream halted")
    else:
        context.log.info(f"run {run.run_id}: ledger {outcome.status}: {outcome.reason}")
    return None


def _batch(run_config: dict) -> BatchSpec:
    """The run's batch; an empty one with unknown trigger when its config cannot be read."""
    try:
        return batch_from_run_config(run_config)
    except (TypeError, ValueError, AttributeError):
        return BatchSpec(card_ids=(), trigger="unknown", mode="unknown")


def _error_text(error: object) -> str:
    """`Class: message` of the user's exception, unwrapping Dagster's step-execution wrapper."""
    while getattr(error, "cls_name", None) in WRAPPER_ERRORS and getattr(error, "cause", None) is not None:
        error = error.cause  # type: ignore[attr-defined]
    message = (getattr(error, "message", None) or "").strip()
    return message or str(getattr(error, "cls_name", "error"))


def _number(value: object) -> float | None:
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None


def _trim(reason: str) -> str:
    return reason if len(reason) <= MAX_REASON else reason[: MAX_REASON - 3] + "..."
