"""The dispatch ledger: one row per micro-batch run, keyed by the Dagster run id.

Status moves `running` -> `completed` | `throttled` | `halted` (by the run itself: finished, no OCR slot, or stopped
by a gate before any work) or -> `failed` | `halted` (by the run-failure sensor, for an error or an envelope
breach), or -> `failed` by the reaper when the row stopped heartbeating (its batch died unseen). A row is
`completed` only through `close`, which Stage E's last asset calls after every stage finished; a closed row is
never reopened by a late writer (an orphaned step, a re-processed failure event).

A row is opened either by the run itself when Stage C starts (`open_batch`, for a run whose cards were chosen
when it was requested: the sweep's), or before the run starts by a claim (`claim_batch`: a draining run's or a bulk
run's next batch), which takes the cards and opens the row in one serialised transaction so no two claims share a
card. The run's own `open_batch` then finds its row and only heartbeats it.

A `running` row proves it is alive: `open_batch`, `merge_counters` and `heartbeat` touch `heartbeat_at`. Whenever a
row leaves `running` other than `completed`-with-everything-done, the cards it still owes work are deferred
(`db.work.queue.defer_unfinished`) in the same transaction, which counts their attempt and sets their retry wait.

Every function runs in the caller's connection: a write is one transaction (`with engine.begin() as conn:`), and the
caller must not fold it into a longer one (a heartbeat or a close that waits on other work holds its row's lock).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, func, text, type_coerce, update
from sqlalchemy.dialects.postgresql import JSONB, insert

from stage_e_dagster.db.arrays import text_array
from stage_e_dagster.db.core.models import DispatchLedger
from stage_e_dagster.db.work.queue import StreamCard, cards_needing_work, defer_unfinished
from stage_e_dagster.host import owner_is_gone

FINAL = ("completed", "throttled", "failed", "halted")


@dataclass(frozen=True)
class LedgerRow:
    run_id: str
    trigger: str
    mode: str
    card_ids: list[int]
    status: str
    counters: dict[str, Any]
    failure_reason: str | None
    started_at: datetime
    finished_at: datetime | None
    heartbeat_at: datetime
    owner: str | None


def open_batch(conn: Connection, run_id: str, trigger: str, mode: str, card_ids: Sequence[int],
               owner: str | None = None) -> None:
    """Record that `run_id` is working on `card_ids` in process `owner` (`host.process_owner()`); idempotent: a
    step retry keeps the row, heartbeats it and names its own process."""
    stmt = insert(DispatchLedger).values(
        run_id=run_id, trigger=trigger, mode=mode, card_ids=list(card_ids), status="running", counters={},
        owner=owner,
    )
    stmt = stmt.on_conflict_do_update(
        index_elements=[DispatchLedger.run_id], set_={"heartbeat_at": func.now(), "owner": owner},
        where=DispatchLedger.status == "running",
    )
    conn.execute(stmt)


_CLAIM_LOCK_KEY = 0x5E_DB_00_03
"""Serialises claims, held to the end of the claiming transaction: a claim's lookup of offered cards starts after
the previous claim committed its row, so it sees those cards as taken."""


def claim_batch(conn: Connection, run_id: str, trigger: str, mode: str, limit: int, *, busy: Collection[int] = (),
                owner: str | None = None, after_id: int | None = None) -> list[StreamCard]:
    """Atomically take up to `limit` offered cards for `run_id` (`db.work.queue.cards_needing_work`) and open its
    `running` row naming them; no other claim, draining run or bulk run can take the same cards while the row runs.
    Runs in the caller's transaction (`with engine.begin() as conn:`), which must commit for the claim to count.
    Returns the cards; none claimed opens no row."""
    conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _CLAIM_LOCK_KEY})
    cards = cards_needing_work(conn, limit, busy, after_id)
    if cards:
        open_batch(conn, run_id, trigger, mode, [card.id for card in cards], owner)
    return cards


def heartbeat(conn: Connection, run_id: str) -> bool:
    """Prove the batch is alive; False when its row is no longer `running` (closed, or reclaimed)."""
    stmt = (update(DispatchLedger)
            .where(DispatchLedger.run_id == run_id, DispatchLedger.status == "running")
            .values(heartbeat_at=func.now()))
    return conn.execute(stmt).rowcount == 1


def merge_counters(conn: Connection, run_id: str, counters: dict[str, Any]) -> None:
    """Merge one stage's counters into the row (top-level keys replace); a stage boundary, so it heartbeats."""
    conn.execute(
        update(DispatchLedger).where(DispatchLedger.run_id == run_id).values(
            counters=DispatchLedger.counters.op("||")(type_coerce(counters, JSONB)), heartbeat_at=func.now())
    )


def _defer_row(conn: Connection, run_id: str, status: str) -> int:
    """Defer the cards of `run_id` that still need work (see the module docstring)."""
    card_ids = conn.execute(text("SELECT card_ids FROM dispatch_ledger WHERE run_id = :run_id"),
                            {"run_id": run_id}).scalar()
    return defer_unfinished(conn, card_ids or (), status)


def close(conn: Connection, run_id: str, status: str, counters: dict[str, Any] | None = None,
          reason: str | None = None) -> bool:
    """Close a running row as `completed`, `throttled` or `halted` (a gate stopped it before any work); False when
    the row is missing or already closed. The row's unfinished cards are deferred in the same transaction."""
    if status not in ("completed", "throttled", "halted"):
        raise ValueError(f"a run closes its own row as completed, throttled or halted, not {status!r}")
    values: dict[str, Any] = {"status": status, "finished_at": func.now(), "failure_reason": reason,
                              "heartbeat_at": func.now()}
    if counters is not None:
        values["counters"] = DispatchLedger.counters.op("||")(type_coerce(counters, JSONB))
    stmt = update(DispatchLedger).where(DispatchLedger.run_id == run_id, DispatchLedger.status == "running")
    closed = conn.execute(stmt.values(**values)).rowcount == 1
    if closed:
        _defer_row(conn, run_id, "failed" if status == "completed" else status)
    return closed


def mark_failed(conn: Connection, run_id: str, status: str, reason: str, trigger: str = "unknown",
                mode: str = "unknown", card_ids: Sequence[int] = ()) -> None:
    """Mark a failed run `failed` or `halted` (run-failure sensor). Creates the row if the run died before
    opening it; never overwrites `completed` or `throttled`. Its cards are deferred once, on leaving `running`."""
    if status not in ("failed", "halted"):
        raise ValueError(f"mark_failed sets failed or halted, not {status!r}")
    before = conn.execute(text("SELECT status FROM dispatch_ledger WHERE run_id = :run_id FOR UPDATE"),
                          {"run_id": run_id}).scalar()
    stmt = insert(DispatchLedger).values(
        run_id=run_id, trigger=trigger, mode=mode, card_ids=list(card_ids), status=status, counters={},
        failure_reason=reason, finished_at=func.now(),
    )
    stmt = stmt.on_conflict_do_update(
        index_elements=[DispatchLedger.run_id],
        set_={"status": status, "failure_reason": reason, "finished_at": func.now()},
        where=DispatchLedger.status.in_(("running", "failed", "halted")),
    )
    conn.execute(stmt)
    if before in (None, "running"):
        _defer_row(conn, run_id, status)


_REAP = text(
    """
    UPDATE dispatch_ledger SET status = 'failed', finished_at = now(),
        failure_reason = CASE
            WHEN run_id = ANY(CAST(:gone AS text[]))
            THEN 'abandoned: the process running it (' || coalesce(owner, '?') || ') is gone'
            WHEN run_id = ANY(CAST(:ended AS text[]))
            THEN 'abandoned: its Dagster run ended while the row still said running'
            ELSE 'abandoned: no heartbeat since ' || to_char(heartbeat_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')
                 || ' UTC (the batch died: killed run, lost database or host)' END
    WHERE status = 'running'
      AND (heartbeat_at < now() - make_interval(secs => :max_age) OR run_id = ANY(CAST(:ended AS text[]))
           OR run_id = ANY(CAST(:gone AS text[])))
    RETURNING run_id
    """
)


def reap(conn: Connection, max_age_seconds: float, ended_runs: Collection[str] = ()) -> list[LedgerRow]:
    """Close as `failed` every `running` row whose batch died: its process on this host is gone, its Dagster run
    ended (`ended_runs`), or it stopped heartbeating more than `max_age_seconds` ago. Their unfinished cards are
    deferred in the same transaction; returns the rows reclaimed."""
    gone = [row.run_id for row in running(conn) if owner_is_gone(row.owner)]
    params = {"max_age": max_age_seconds, "ended": text_array(sorted(ended_runs)), "gone": text_array(gone)}
    reclaimed = list(conn.execute(_REAP, params).scalars())
    for run_id in reclaimed:
        _defer_row(conn, run_id, "failed")
    return [row for run_id in reclaimed if (row := get(conn, run_id)) is not None]


_SELECT = (
    "SELECT run_id, trigger, mode, card_ids, status, counters, failure_reason, started_at, finished_at, "
    "heartbeat_at, owner FROM dispatch_ledger"
)


def get(conn: Connection, run_id: str) -> LedgerRow | None:
    row = conn.execute(text(f"{_SELECT} WHERE run_id = :run_id"), {"run_id": run_id}).mappings().first()
    return LedgerRow(**row) if row else None


def closed_run_ids(conn: Connection, run_ids: Collection[str]) -> set[str]:
    """Which of `run_ids` have a ledger row that is no longer `running`."""
    if not run_ids:
        return set()
    rows = conn.execute(text("SELECT run_id FROM dispatch_ledger WHERE run_id = ANY(CAST(:ids AS text[])) "
                             "AND status <> 'running'"), {"ids": text_array(sorted(run_ids))})
    return set(rows.scalars())


def unknown_run_ids(conn: Connection, run_ids: Collection[str]) -> set[str]:
    """Which of `run_ids` have no ledger row at all (their batch never opened one)."""
    if not run_ids:
        return set()
    rows = conn.execute(text("SELECT run_id FROM dispatch_ledger WHERE run_id = ANY(CAST(:ids AS text[]))"),
                        {"ids": text_array(sorted(run_ids))})
    return set(run_ids) - set(rows.scalars())


def running(conn: Connection) -> list[LedgerRow]:
    """Rows that say `running`, oldest first."""
    rows = conn.execute(text(f"{_SELECT} WHERE status = 'running' ORDER BY started_at")).mappings().all()
    return [LedgerRow(**row) for row in rows]


def recent(conn: Connection, limit: int = 20) -> list[LedgerRow]:
    rows = conn.execute(text(f"{_SELECT} ORDER BY started_at DESC LIMIT :n"), {"n": limit}).mappings().all()
    return [LedgerRow(**row) for row in rows]
