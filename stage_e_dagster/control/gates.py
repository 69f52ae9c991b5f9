"""What may start now: the gates every run, the stream sensor, the backstop sweep and `stage-e run` obey.

Nothing passive starts while streaming is switched off or any envelope trip is open. A bulk run refuses an open trip
unless the operator overrode it with a note. No new run is requested while the run queue is full (backpressure).
"""

from __future__ import annotations

from sqlalchemy import Engine

from stage_e_dagster.db.runs.trips import Trip, open_trips
from stage_e_dagster.job_contracts import MICRO_BATCH


def trip_reason(trips: list[Trip]) -> str | None:
    """Why an open trip halts the stream (None when no trip is open)."""
    if not trips:
        return None
    first = trips[0]
    more = f" (and {len(trips) - 1} more)" if len(trips) > 1 else ""
    source = f" ({first.names})" if first.names else ""
    return (f"envelope trip {first.id} is open{more}: bar {first.bar}{source} tripped by run {first.run_id}; "
            "nothing starts until an operator acknowledges it")


def current_trips(engine: Engine) -> list[Trip]:
    """The open envelope trips, oldest first."""
    with engine.connect() as conn:
        return open_trips(conn)


def halt_reason(engine: Engine, streaming: bool) -> str | None:
    """Why nothing passive may start now (streaming disabled, an open envelope trip), or None when work may start."""
    if not streaming:
        return "streaming is disabled (STAGE_E_STREAMING is off)"
    return trip_reason(current_trips(engine))


def bulk_refusal(trips: list[Trip], trip_override: str | None) -> str | None:
    """Why a bulk run must not start (an open trip and no override note), or None."""
    if trips and not (trip_override or "").strip():
        return (f"envelope trip {trips[0].id} is open ({trips[0].bar}): acknowledge it (stage-e trips ack TRIP_ID "
                "--note ...) or start the bulk run with --override-trip NOTE")
    return None


def run_start_gate(engine: Engine, mode: str, streaming: bool, trip_override: str | None = None) -> str | None:
    """Why a run must stop before any work (None: it may go on). A passive run obeys the stream's gates; a bulk
    run only refuses an open trip, unless the operator overrode it with a note."""
    if mode == "passive":
        return halt_reason(engine, streaming)
    return bulk_refusal(current_trips(engine), trip_override)



def backpressure_reason(queued: int, max_queued_runs: int) -> str:
    return (f"backpressure: {queued} {MICRO_BATCH} runs already wait in the queue "
            f"(max_queued_runs={max_queued_runs})")
