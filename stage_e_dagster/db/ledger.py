"""The dispatch ledger: one row per micro-batch run, keyed by the Dagster run id.

Status moves `running` -> `completed` | `throttled` (by the run itself) or -> `failed` | `halted` (by the
run-failure sensor). A row is `completed` only through `close`, which Stage E's last asset calls after every
stage finished; a closed row is never reopened by a late writer (an orphaned step, a re-processed failure event).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, text, type_coerce, update
from sqlalchemy.dialects.postgresql import JSONB, insert

from stage_e_dagster.db.engine import get_engine
from stage_e_dagster.db.models import DispatchLedger

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


def open_batch(url: str, run_id: str, trigger: str, mode: str, card_ids: Sequence[int]) -> None:
    """Record that `run_id` is working on `card_ids` (idempotent: a step retry keeps the same row)."""
    stmt = insert(DispatchLedger).values(
        run_id=run_id, trigger=trigger, mode=mode, card_ids=list(card_ids), status="running", counters={}
    )
    stmt = stmt.on_conflict_do_nothing(index_elements=[DispatchLedger.run_id])
    with get_engine(url).begin() as conn:
        conn.execute(stmt)


def merge_counters(url: str, run_id: str, counters: dict[str, Any]) -> None:
    """Merge one stage's counters into the row (top-level keys replace)."""
    with get_engine(url).begin() as conn:
        conn.execute(
            update(DispatchLedger)
            .where(DispatchLedger.run_id == run_id)
            .values(counters=DispatchLedger.counters.op("||")(type_coerce(counters, JSONB)))
        )


def close(url: str, run_id: str, status: str, counters: dict[str, Any] | None = None,
          reason: str | None = None) -> bool:
    """Close a running row as `completed` or `throttled`; False when the row is missing or already closed."""
    if status not in ("completed", "throttled"):
        raise ValueError(f"a run closes its own row as completed or throttled, not {status!r}")
    values: dict[str, Any] = {"status": status, "finished_at": func.now(), "failure_reason": reason}
    if counters is not None:
        values["counters"] = DispatchLedger.counters.op("||")(type_coerce(counters, JSONB))
    stmt = update(DispatchLedger).where(DispatchLedger.run_id == run_id, DispatchLedger.status == "running")
    with get_engine(url).begin() as conn:
        return conn.execute(stmt.values(**values)).rowcount == 1


def mark_failed(url: str, run_id: str, status: str, reason: str, trigger: str = "unknown", mode: str = "unknown",
                card_ids: Sequence[int] = ()) -> None:
    """Mark a failed run `failed` or `halted` (run-failure sensor). Creates the row if the run died before
    opening it; never overwrites `completed` or `throttled`."""
    if status not in ("failed", "halted"):
        raise ValueError(f"mark_failed sets failed or halted, not {status!r}")
    with get_engine(url).begin() as conn:
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


_SELECT = (
    "SELECT run_id, trigger, mode, card_ids, status, counters, failure_reason, started_at, finished_at "
    "FROM dispatch_ledger"
)


def get(url: str, run_id: str) -> LedgerRow | None:
    with get_engine(url).connect() as conn:
        row = conn.execute(text(f"{_SELECT} WHERE run_id = :run_id"), {"run_id": run_id}).mappings().first()
    return LedgerRow(**row) if row else None


def recent(url: str, limit: int = 20) -> list[LedgerRow]:
    with get_engine(url).connect() as conn:
        rows = conn.execute(text(f"{_SELECT} ORDER BY started_at DESC LIMIT :n"), {"n": limit}).mappings().all()
    return [LedgerRow(**row) for row in rows]
