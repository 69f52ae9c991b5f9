"""The fleet-wide fetch limiter's row (`fetch_pace`): every fetch of every process on every host takes its turn here.

It is a GCRA with no burst: `tat` (the theoretical arrival time) is when the next fetch may start; a grant moves it
one interval on (`1 / (rate * factor)` seconds) and tells the caller how long to wait for its turn, so two grants
are never closer than one interval, whoever asked. The clock is the database server's (`clock_timestamp()`), so
hosts need no synchronised clocks. `factor` is the shared pace: a throttled response halves it (once per
`generation`: the responses to requests granted before a change do not halve it again), and a run of clean
responses doubles it back, up to the configured rate.

Each function is one statement in the caller's connection (autocommit, or commit right after): the row is locked
only for that statement.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, text

_GRANT = text(
    """
    UPDATE fetch_pace SET tat = GREATEST(tat, clock_timestamp()) + make_interval(secs => :interval / factor)
    WHERE id = 1
    RETURNING EXTRACT(EPOCH FROM (tat - clock_timestamp())) - :interval / factor AS wait, generation, factor,
              EXTRACT(EPOCH FROM tat) - :interval / factor AS at
    """
)
_THROTTLED = text(
    """
    UPDATE fetch_pace SET factor = GREATEST(:floor, factor / 2), generation = generation + 1, clean_streak = 0,
        halvings = halvings + 1, updated_at = now(),
        tat = GREATEST(tat, clock_timestamp()) + make_interval(secs => :interval / GREATEST(:floor, factor / 2))
    WHERE id = 1 AND generation = :generation
    RETURNING factor
    """
)
_CLEAN = text(
    """
    UPDATE fetch_pace SET
        clean_streak = CASE WHEN clean_streak + 1 >= :recover_after AND factor < 1 THEN 0 ELSE clean_streak + 1 END,
        factor = CASE WHEN clean_streak + 1 >= :recover_after AND factor < 1 THEN LEAST(1.0, factor * 2)
                      ELSE factor END,
        generation = CASE WHEN clean_streak + 1 >= :recover_after AND factor < 1 THEN generation + 1
                          ELSE generation END,
        updated_at = CASE WHEN clean_streak + 1 >= :recover_after AND factor < 1 THEN now() ELSE updated_at END
    WHERE id = 1
    RETURNING factor
    """
)


@dataclass(frozen=True)
class Grant:
    """A turn: how long to wait before the request starts, under which pace generation, at which factor, and when
    the turn is (POSIX seconds by the database's clock)."""

    wait_seconds: float
    generation: int
    factor: float
    at: float = 0.0


@dataclass(frozen=True)
class Pace:
    factor: float
    generation: int
    clean_streak: int
    halvings: int
    updated_at: datetime


def grant(conn: Connection, interval_seconds: float) -> Grant:
    """Take the next turn at `interval_seconds` between fetches (at full pace)."""
    row = conn.execute(_GRANT, {"interval": interval_seconds}).one()
    return Grant(max(0.0, float(row.wait)), int(row.generation), float(row.factor), float(row.at))


def throttled(conn: Connection, generation: int, interval_seconds: float, floor: float) -> float | None:
    """A throttled response to a request granted under `generation`: halve the pace (not below `floor`) unless
    another response of that generation already did; the new factor, or None when it was already halved."""
    row = conn.execute(_THROTTLED, {"generation": generation, "interval": interval_seconds, "floor": floor}).first()
    return None if row is None else float(row.factor)


def clean(conn: Connection, recover_after: int) -> float:
    """A clean response: count it, and double the pace back after `recover_after` in a row; the factor now."""
    return float(conn.execute(_CLEAN, {"recover_after": recover_after}).scalar_one())


def read_pace(conn: Connection) -> Pace:
    row = conn.execute(text("SELECT factor, generation, clean_streak, halvings, updated_at FROM fetch_pace "
                            "WHERE id = 1")).one()
    return Pace(float(row.factor), int(row.generation), int(row.clean_streak), int(row.halvings), row.updated_at)
