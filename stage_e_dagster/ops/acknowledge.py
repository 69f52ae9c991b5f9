"""`acknowledge_trip`: the op of the `acknowledge_envelope_trip` job (`jobs.py`), which acknowledges one envelope
trip from the Dagster UI.

Run config: `{"ops": {"acknowledge_trip": {"config": {"trip_id": "envtrip-...", "note": "what was done"}}}}`.
The rules are those of `stage-e trips ack`: a blank note, an unknown trip or one already acknowledged fails the
run with a `Failure` saying why; it touches no other trip and starts nothing.
"""

# No `from __future__ import annotations`: Dagster resolves the op's config and resource annotations at runtime.
from dagster import Config, Failure, MetadataValue, Nothing, OpExecutionContext, Out, Output, op
from pydantic import Field

from stage_e_dagster.db.runs.trips import TripError, acknowledge
from stage_e_dagster.resources.database import AppDatabase


class AcknowledgeTripConfig(Config):
    """Which trip to acknowledge, and the operator's note on what was done about it."""

    trip_id: str = Field(description="The trip id, `envtrip-<UTC yyyymmddTHHMMSS>-<8 hex>` (see `stage-e trips list`).")
    note: str = Field(description="What was done about the breach; required, never blank.")


@op(out=Out(Nothing), description="Acknowledge one open envelope trip with a note, reopening the stream if no other "
                                   "trip is open.")
def acknowledge_trip(context: OpExecutionContext, config: AcknowledgeTripConfig, database: AppDatabase):
    try:
        with database.engine.begin() as conn:
            trip = acknowledge(conn, config.trip_id.strip(), config.note)
    except TripError as err:
        raise Failure(description=f"not acknowledged: {err}", allow_retries=False) from None
    context.log.info(f"acknowledged {trip.id} ({trip.bar} {trip.observed} > {trip.ceiling}): {trip.acknowledged_note}")
    yield Output(
        None,
        metadata={
            "trip_id": trip.id,
            "bar": trip.bar,
            "run_id": MetadataValue.text(trip.run_id or ""),
            "acknowledged_at": MetadataValue.text(f"{trip.acknowledged_at:%Y-%m-%d %H:%M:%S %Z}"),
            "note": MetadataValue.text(trip.acknowledged_note or ""),
        },
    )

