"""Queries that find cards needing work, for the stream sensor (a watermark) and the backstop sweep (cursors).

"Needs work" is `db/predicates.py` (the rules of `domain/work.py`). Cards whose file vanished, and cards inside a
`running` ledger batch, are never returned.

Sweep cursors advance by compare-and-swap on (position, wrap_count): a sweeper reads the cursor, picks the next
chunk of eligible card ids after `position`, and moves the cursor only if nobody moved it meanwhile. Two sweepers
therefore never claim the same range; the loser re-reads and tries the next range.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import text

from stage_e_dagster.db.arrays import int_array
from stage_e_dagster.db.engine import get_engine
from stage_e_dagster.db.predicates import IN_RUNNING_BATCH, NEEDS_STAGE_C, NEEDS_STAGE_D, predicate_params

SWEEP_CURSORS = ("stage_c", "stage_d")
"""Names of the backstop sweep's cursors (`sweep_cursor.name`)."""

CLAIM_ATTEMPTS = 5

_NOT_BUSY = "NOT (c.id = ANY(CAST(:busy AS bigint[])))"
_ELIGIBLE = {"stage_c": NEEDS_STAGE_C, "stage_d": NEEDS_STAGE_D}
_params = predicate_params


@dataclass(frozen=True)
class StreamCard:
    """A card the stream found: its id, and the version fields its run key and the watermark use."""

    id: int
    content_sha256: str
    updated_at: datetime


def cards_needing_work(
    url: str, after: tuple[datetime, int] | None, limit: int, busy: Collection[int] = ()
) -> list[StreamCard]:
    """Up to `limit` cards needing Stage C or D with (updated_at, id) beyond the watermark `after`, in order,
    leaving out `busy` cards (already in a queued or started run)."""
    if limit <= 0:
        return []
    where = [
        "c.missing_since IS NULL",
        f"({NEEDS_STAGE_C} OR {NEEDS_STAGE_D})",
        f"NOT {IN_RUNNING_BATCH}",
        _NOT_BUSY,
    ]
    params = _params(limit=limit, busy=int_array(sorted(busy)))
    if after is not None:
        where.insert(0, "(c.updated_at, c.id) > (:after_at, :after_id)")
        params.update(after_at=after[0], after_id=after[1])
    sql = (
        "SELECT c.id, c.content_sha256, c.updated_at FROM card c WHERE "
        + " AND ".join(where)
        + " ORDER BY c.updated_at, c.id LIMIT :limit"
    )
    with get_engine(url).connect() as conn:
        rows = conn.execute(text(sql), params).all()
    return [StreamCard(id=r.id, content_sha256=r.content_sha256, updated_at=r.updated_at) for r in rows]


def count_needing_work(url: str) -> int:
    """How many cards need Stage C or D right now (the backlog a bulk run would take on)."""
    sql = (
        "SELECT count(*) FROM card c WHERE c.missing_since IS NULL"
        f" AND ({NEEDS_STAGE_C} OR {NEEDS_STAGE_D}) AND NOT {IN_RUNNING_BATCH}"
    )
    with get_engine(url).connect() as conn:
        return int(conn.execute(text(sql), _params()).scalar_one())


def backlog(url: str) -> dict[str, int]:
    """Cards owed to each stage right now (missing files and cards in running batches left out)."""
    sql = (
        f"SELECT count(*) FILTER (WHERE {NEEDS_STAGE_C}) AS stage_c, count(*) FILTER (WHERE {NEEDS_STAGE_D}) AS stage_d"
        f" FROM card c WHERE c.missing_since IS NULL AND NOT {IN_RUNNING_BATCH}"
    )
    with get_engine(url).connect() as conn:
        row = conn.execute(text(sql), _params()).one()
    return {"stage_c": int(row.stage_c), "stage_d": int(row.stage_d)}


@dataclass(frozen=True)
class SweepClaim:
    """Eligible cards in the id range (start, end] one sweeper claimed during pass `wrap_count`.

    `wrapped` says the claim reached the end of the table: the cursor went back to 0 and its pass count went up.
    An empty claim that did not wrap moved nothing (no eligible cards at all, or every attempt lost the race).
    """

    card_ids: tuple[int, ...]
    start: int
    end: int
    wrap_count: int
    wrapped: bool


def sweep_cursor(url: str, name: str) -> tuple[int, int]:
    """(position, wrap_count) of a sweep cursor; (0, 0) before its first claim."""
    with get_engine(url).connect() as conn:
        row = conn.execute(
            text("SELECT position, wrap_count FROM sweep_cursor WHERE name = :name"), {"name": name}
        ).first()
    return (int(row.position), int(row.wrap_count)) if row else (0, 0)


def eligible_after(url: str, name: str, position: int, limit: int, busy: Collection[int] = ()) -> list[int]:
    """Ids above `position` of cards the sweep cursor `name` would take, ascending, at most `limit`."""
    sql = (
        "SELECT c.id FROM card c WHERE c.id > :position AND c.missing_since IS NULL"
        f" AND {_ELIGIBLE[name]} AND NOT {IN_RUNNING_BATCH} AND {_NOT_BUSY} ORDER BY c.id LIMIT :limit"
    )
    params = _params(position=position, limit=limit, busy=int_array(sorted(busy)))
    with get_engine(url).connect() as conn:
        return list(conn.execute(text(sql), params).scalars())


def claim_sweep_range(
    url: str, name: str, chunk: int, attempts: int = CLAIM_ATTEMPTS, busy: Collection[int] = ()
) -> SweepClaim:
    """Claim the next `chunk` eligible cards of cursor `name` by compare-and-swap, retrying lost races.

    Fewer than `chunk` cards left means the end of the table: the claim takes them, and the cursor wraps to
    position 0 with `wrap_count + 1`. A cursor at 0 with nothing eligible is left alone (an idle pass is no pass).
    """
    if name not in _ELIGIBLE:
        raise ValueError(f"unknown sweep cursor {name!r}; expected one of {SWEEP_CURSORS}")
    if chunk < 1:
        raise ValueError(f"sweep chunk must be at least 1, not {chunk}")
    engine = get_engine(url)
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO sweep_cursor (name) VALUES (:name) ON CONFLICT (name) DO NOTHING"),
                     {"name": name})
    position, wrap_count = 0, 0
    for _ in range(max(1, attempts)):
        position, wrap_count = sweep_cursor(url, name)
        ids = eligible_after(url, name, position, chunk, busy)
        wrapped = len(ids) < chunk
        if wrapped and not ids and position == 0:
            return SweepClaim((), 0, 0, wrap_count, False)
        new_position, new_wrap = (0, wrap_count + 1) if wrapped else (ids[-1], wrap_count)
        with engine.begin() as conn:
            moved = conn.execute(
                text(
                    "UPDATE sweep_cursor SET position = :new_position, wrap_count = :new_wrap, updated_at = now()"
                    " WHERE name = :name AND position = :position AND wrap_count = :wrap_count"
                ),
                {"name": name, "position": position, "wrap_count": wrap_count,
                 "new_position": new_position, "new_wrap": new_wrap},
            ).rowcount
        if moved == 1:
            return SweepClaim(tuple(ids), position, ids[-1] if ids else position, wrap_count, wrapped)
    return SweepClaim((), position, position, wrap_count, False)
