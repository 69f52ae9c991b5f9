"""What a failed `micro_batch` run means, and recording it: an envelope breach halts with a trip, anything else fails.

An envelope breach (the first step failure is an `EnvelopeTripped`) records one `envelope_trip` row for the run and
marks its ledger row `halted`; any other failure, including a run whose worker was killed (the failure event then
carries no data), marks it `failed` with the reason. Both writes are idempotent, so re-processing an event changes
nothing. The run-failure sensor records the runs the daemon sees; `record_in_process_failure` records an in-process
run's failure at once, since the sensor may not be running.
"""

from __future__ import annotations

from dataclasses import dataclass

from dagster import DagsterEvent, DagsterEventType
from sqlalchemy import Engine

from stage_e_dagster.db.runs import ledger, trips
from stage_e_dagster.job_contracts import MICRO_BATCH, BatchSpec, batch_from_run_config

ENVELOPE_FAILURE = "EnvelopeTripped"
CRASH_REASON = "run worker crashed or was killed"
MAX_REASON = 2000
WRAPPER_ERRORS = ("DagsterExecutionStepExecutionError", "DagsterUserCodeExecutionError")


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


def record_failure(engine: Engine, run_id: str, run_config: dict, outcome: FailureOutcome, job_name: str
                   ) -> str | None:
    """Write the trip (envelope breaches), then the ledger status, each in its own transaction; returns the new trip
    id, if one was recorded."""
    batch = _batch(run_config)
    trigger, mode = batch.trigger[:32], batch.mode[:16]
    trip_id = None
    if outcome.status == "halted":
        detail = {"job": job_name, "step": outcome.step_key, "mode": mode, "trigger": trigger,
                  "cards": len(batch.card_ids)}
        bar = (outcome.bar or "unknown")[:32]
        with engine.begin() as conn:
            trip_id = trips.record_trip(conn, run_id, bar, outcome.observed, outcome.ceiling, detail)
    with engine.begin() as conn:
        ledger.mark_failed(conn, run_id, outcome.status, outcome.reason, trigger, mode, batch.card_ids)
    return trip_id


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


def record_in_process_failure(engine: Engine, result, spec: BatchSpec) -> str:
    """Record a failed in-process run (`execute_in_process`) as the run-failure sensor would; its ledger status."""
    event = next((e for e in result.all_events if e.event_type == DagsterEventType.RUN_FAILURE), None)
    if event is None:
        return "failed"
    outcome = classify_failure(event)
    record_failure(engine, result.run_id, spec.run_config(), outcome, MICRO_BATCH)
    return outcome.status
