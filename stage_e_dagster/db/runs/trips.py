"""Envelope trips: recorded once per failed run, open until an operator acknowledges them with a note.

Every function runs in the caller's connection; a write is one transaction (`with engine.begin() as conn:`).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, text
from sqlalchemy.dialects.postgresql import insert

from stage_e_dagster.db.core.models import EnvelopeTrip


class TripError(ValueError):
    """An acknowledgement that breaks the rules: unknown trip, already acknowledged, or a blank note."""


@dataclass(frozen=True)
class Trip:
    id: str
    bar: str
    observed: float | None
    ceiling: float | None
    detail: dict[str, Any]
    run_id: str | None
    tripped_at: datetime
    acknowledged_at: datetime | None
    acknowledged_note: str | None

    @property
    def names(self) -> str:
        """What the trip names beyond its bar: `source K` and, for a fetch lockout, `host H` (empty if neither)."""
        detail = self.detail or {}
        return ", ".join(f"{what} {detail[what]}" for what in ("source", "host") if detail.get(what))


def new_trip_id(now: datetime | None = None) -> str:
    """`envtrip-<UTC yyyymmddTHHMMSS>-<8 hex>`."""
    moment = (now or datetime.now(UTC)).astimezone(UTC)
    return f"envtrip-{moment:%Y%m%dT%H%M%S}-{secrets.token_hex(4)}"


def record_trip(conn: Connection, run_id: str, bar: str, observed: float | None, ceiling: float | None,
                detail: dict[str, Any] | None = None) -> str | None:
    """Insert the trip for `run_id`; None when that run's trip is already recorded (exactly once per run)."""
    trip_id = new_trip_id()
    stmt = insert(EnvelopeTrip).values(
        id=trip_id, bar=bar, observed=observed, ceiling=ceiling, detail=detail or {}, run_id=run_id
    ).on_conflict_do_nothing(index_elements=[EnvelopeTrip.run_id])
    return conn.execute(stmt.returning(EnvelopeTrip.id)).scalar_one_or_none()


_SELECT = (
    "SELECT id, bar, observed, ceiling, detail, run_id, tripped_at, acknowledged_at, acknowledged_note "
    "FROM envelope_trip"
)


def open_trips(conn: Connection) -> list[Trip]:
    """Unacknowledged trips, oldest first. Any one of them halts the stream."""
    rows = conn.execute(text(f"{_SELECT} WHERE acknowledged_at IS NULL ORDER BY tripped_at, id")).mappings()
    return [Trip(**row) for row in rows]


def list_trips(conn: Connection, include_acknowledged: bool = True, limit: int = 50) -> list[Trip]:
    where = "" if include_acknowledged else " WHERE acknowledged_at IS NULL"
    rows = conn.execute(text(f"{_SELECT}{where} ORDER BY tripped_at DESC, id LIMIT :n"), {"n": limit})
    return [Trip(**row) for row in rows.mappings()]


def acknowledge(conn: Connection, trip_id: str, note: str) -> Trip:
    """Acknowledge one open trip with a non-blank note; touches no other trip and starts nothing."""
    if not note or not note.strip():
        raise TripError("an acknowledgement needs a note saying what was done about the trip")
    row = conn.execute(text(f"{_SELECT} WHERE id = :id FOR UPDATE"), {"id": trip_id}).mappings().first()
    if row is None:
        raise TripError(f"no envelope trip {trip_id!r}")
    if row["acknowledged_at"] is not None:
        raise TripError(f"trip {trip_id} was already acknowledged at {row['acknowledged_at']:%Y-%m-%d %H:%M:%S}")
    updated = conn.execute(
        text("UPDATE envelope_trip SET acknowledged_at = now(), acknowledged_note = :note WHERE id = :id "
             "RETURNING id, bar, observed, ceiling, detail, run_id, tripped_at, acknowledged_at, "
             "acknowledged_note"),
        {"id": trip_id, "note": note.strip()},
    ).mappings().one()
    return Trip(**updated)
