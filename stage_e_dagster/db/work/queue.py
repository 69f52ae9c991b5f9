"""Finding work: the cards the stream, the sweep and bulk runs offer next, the backlog, and per-card retry waits.

Every lookup reads `card_work` (migration 0005), which holds exactly the cards that need Stage C or D, so its cost
follows the size of the work, not of the `card` table. A card is *offered* when it needs work, its retry wait is
over, and it is in no `running` ledger batch and no queued or started run (`busy`, from the Dagster instance).

Sweep cursors advance by compare-and-swap on (position, wrap_count): a sweeper reads the cursor, picks the next
chunk of offered card ids after `position`, and moves the cursor only if nobody moved it meanwhile. Two sweepers
therefore never claim the same range; the loser re-reads and tries the next range. The `reconcile` cursor walks
the card table in fixed id windows and re-checks `card_work` against the full rule (`db.work.work_rule.reconcile`).

Lookups take the caller's connection. `claim_sweep_range` and `reconcile_next` take an engine: each is a read, a
compare-and-swap and (for reconcile) a repair, every one its own short transaction, so no lock is held across them.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass

from sqlalchemy import Connection, Engine, text

from stage_e_dagster.db.arrays import int_array
from stage_e_dagster.db.work import work_rule
from stage_e_dagster.domain.work import retry_backoff

STAGES = {"stage_c": "C", "stage_d": "D"}
SWEEP_CURSORS = tuple(STAGES)
"""Names of the backstop sweep's cursors (`sweep_cursor.name`)."""
RECONCILE_CURSOR = "reconcile"
CLAIM_ATTEMPTS = 5

_RUNNING = "SELECT DISTINCT unnest(card_ids) AS id FROM dispatch_ledger WHERE status = 'running'"
_OFFERED = (
    "(w.retry_at IS NULL OR w.retry_at <= now())"
    " AND NOT EXISTS (SELECT 1 FROM running r WHERE r.id = w.card_id)"
    " AND NOT (w.card_id = ANY(CAST(:busy AS bigint[])))"
)


@dataclass(frozen=True)
class StreamCard:
    """A card offered for work: its id, its bytes, and how many batches already ended without finishing it."""

    id: int
    content_sha256: str
    attempts: int


def cards_needing_work(conn: Connection, limit: int, busy: Collection[int] = (), after_id: int | None = None
                       ) -> list[StreamCard]:
    """Up to `limit` offered cards in id order (beyond `after_id` when given), leaving out `busy` cards."""
    if limit <= 0:
        return []
    sql = (
        f"WITH running AS ({_RUNNING}) "
        "SELECT w.card_id AS id, c.content_sha256, w.attempts FROM card_work w JOIN card c ON c.id = w.card_id "
        f"WHERE w.card_id > :after AND {_OFFERED} ORDER BY w.card_id LIMIT :limit"
    )
    params = {"limit": limit, "after": after_id if after_id is not None else 0, "busy": int_array(sorted(busy))}
    rows = conn.execute(text(sql), params).all()
    return [StreamCard(id=r.id, content_sha256=r.content_sha256, attempts=r.attempts) for r in rows]


def has_offered(conn: Connection, after_id: int | None = None) -> bool:
    """Whether any card is offered right now (beyond `after_id`), busy runs aside: the cheap look before a claim."""
    sql = (f"WITH running AS ({_RUNNING}) SELECT EXISTS (SELECT 1 FROM card_work w WHERE w.card_id > :after AND "
           f"{_OFFERED})")
    return bool(conn.execute(text(sql), {"after": after_id or 0, "busy": int_array([])}).scalar_one())


def backlog(conn: Connection) -> dict[str, int]:
    """Cards owed each stage right now outside running batches (`stage_c`, `stage_d`; `waiting` of them are in a
    retry wait), and cards owed work inside running batches (`in_running_batches`)."""
    sql = (
        f"WITH running AS ({_RUNNING}), owed AS (SELECT w.stage, w.retry_at,"
        " EXISTS (SELECT 1 FROM running r WHERE r.id = w.card_id) AS busy FROM card_work w)"
        " SELECT count(*) FILTER (WHERE stage = 'C' AND NOT busy) AS stage_c,"
        " count(*) FILTER (WHERE stage = 'D' AND NOT busy) AS stage_d,"
        " count(*) FILTER (WHERE retry_at > now() AND NOT busy) AS waiting,"
        " count(*) FILTER (WHERE busy) AS in_running_batches FROM owed"
    )
    row = conn.execute(text(sql)).one()
    return {key: int(value) for key, value in row._mapping.items()}


def count_needing_work(conn: Connection) -> int:
    """How many cards are offered right now (what a bulk run would take on)."""
    sql = f"WITH running AS ({_RUNNING}) SELECT count(*) FROM card_work w WHERE {_OFFERED}"
    return int(conn.execute(text(sql), {"busy": int_array([])}).scalar_one())


_DEFER = text(
    "UPDATE card_work SET attempts = attempts + 1, retry_at = GREATEST(retry_at, now() + make_interval(secs => "
    "CASE WHEN attempts = 0 THEN :first ELSE LEAST(:base * power(2, attempts - 1), :cap) END)) "
    "WHERE card_id = ANY(CAST(:ids AS bigint[]))"
)


def defer_unfinished(conn: Connection, card_ids: Iterable[int], status: str) -> int:
    """Count an attempt for each of the cards still owed work after a batch that ended with `status`, and set its
    retry wait by `domain.work.retry_backoff` (a later wait the batch set itself, such as a throttled fetch's, is
    kept); how many were deferred. Runs in the caller's transaction."""
    ids = sorted(set(card_ids))
    if not ids:
        return 0
    first, base, cap = retry_backoff(status)
    return conn.execute(_DEFER, {"ids": int_array(ids), "first": first, "base": base, "cap": cap}).rowcount


@dataclass(frozen=True)
class SweepClaim:
    """Offered cards in the id range (start, end] one sweeper claimed during pass `wrap_count`.

    `wrapped` says the claim reached the end of the work: the cursor went back to 0 and its pass count went up.
    An empty claim that did not wrap moved nothing (no offered cards at all, or every attempt lost the race).
    """

    card_ids: tuple[int, ...]
    start: int
    end: int
    wrap_count: int
    wrapped: bool


def sweep_cursor(conn: Connection, name: str) -> tuple[int, int]:
    """(position, wrap_count) of a sweep cursor; (0, 0) before its first claim."""
    row = conn.execute(text("SELECT position, wrap_count FROM sweep_cursor WHERE name = :name"), {"name": name}).first()
    return (int(row.position), int(row.wrap_count)) if row else (0, 0)


def eligible_after(conn: Connection, name: str, position: int, limit: int, busy: Collection[int] = ()) -> list[int]:
    """Ids above `position` of offered cards owed the stage of sweep cursor `name`, ascending, at most `limit`."""
    sql = (
        f"WITH running AS ({_RUNNING}) SELECT w.card_id FROM card_work w "
        f"WHERE w.stage = :stage AND w.card_id > :position AND {_OFFERED} ORDER BY w.card_id LIMIT :limit"
    )
    params = {"stage": STAGES[name], "position": position, "limit": limit, "busy": int_array(sorted(busy))}
    return list(conn.execute(text(sql), params).scalars())


def _move_cursor(conn: Connection, name: str, old: tuple[int, int], new: tuple[int, int]) -> bool:
    """Compare-and-swap a cursor from `old` to `new` (position, wrap_count); False when someone moved it first."""
    conn.execute(text("INSERT INTO sweep_cursor (name) VALUES (:name) ON CONFLICT (name) DO NOTHING"), {"name": name})
    return conn.execute(
        text("UPDATE sweep_cursor SET position = :new_position, wrap_count = :new_wrap, updated_at = now()"
             " WHERE name = :name AND position = :position AND wrap_count = :wrap_count"),
        {"name": name, "position": old[0], "wrap_count": old[1], "new_position": new[0], "new_wrap": new[1]},
    ).rowcount == 1


def claim_sweep_range(
    engine: Engine, name: str, chunk: int, attempts: int = CLAIM_ATTEMPTS, busy: Collection[int] = ()
) -> SweepClaim:
    """Claim the next `chunk` offered cards of cursor `name` by compare-and-swap, retrying lost races.

    Fewer than `chunk` cards left means the end of the work: the claim takes them, and the cursor wraps to
    position 0 with `wrap_count + 1`. A cursor at 0 with nothing offered is left alone (an idle pass is no pass).
    """
    if name not in STAGES:
        raise ValueError(f"unknown sweep cursor {name!r}; expected one of {SWEEP_CURSORS}")
    if chunk < 1:
        raise ValueError(f"sweep chunk must be at least 1, not {chunk}")
    position, wrap_count = 0, 0
    for _ in range(max(1, attempts)):
        with engine.connect() as conn:
            position, wrap_count = sweep_cursor(conn, name)
            ids = eligible_after(conn, name, position, chunk, busy)
        wrapped = len(ids) < chunk
        if wrapped and not ids and position == 0:
            return SweepClaim((), 0, 0, wrap_count, False)
        new = (0, wrap_count + 1) if wrapped else (ids[-1], wrap_count)
        with engine.begin() as conn:
            moved = _move_cursor(conn, name, (position, wrap_count), new)
        if moved:
            return SweepClaim(tuple(ids), position, ids[-1] if ids else position, wrap_count, wrapped)
    return SweepClaim((), position, position, wrap_count, False)


@dataclass(frozen=True)
class Reconciled:
    """One reconcile step: the id window (start, end] re-checked, and how many `card_work` rows it mended."""

    start: int
    end: int
    mended: int


def reconcile_next(engine: Engine, width: int) -> Reconciled | None:
    """Re-check the next `width` card ids after the reconcile cursor against the full rule, wrapping at the end of
    the table; None when another sweeper moved the cursor first."""
    with engine.connect() as conn:
        position, wrap_count = sweep_cursor(conn, RECONCILE_CURSOR)
        top = int(conn.execute(text("SELECT coalesce(max(id), 0) FROM card")).scalar_one())
    end = position + width
    new = (0, wrap_count + 1) if end >= top else (end, wrap_count)
    with engine.begin() as conn:
        if not _move_cursor(conn, RECONCILE_CURSOR, (position, wrap_count), new):
            return None
    with engine.begin() as conn:
        mended = work_rule.reconcile(conn, position, end)
    return Reconciled(position, end, mended)
