"""The Stage E runner: close a batch whose Stage C and D finished, with its cards' consensus in the ledger.

Consensus is resolved once per card, by Stage D in the same transaction that writes the card's votes (so a crash
never leaves votes without their consensus); Stage E reads the states that resulted and closes the ledger row
`completed`. It runs last in `micro_batch`, so a row reads `completed` only after every stage finished.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Engine

from stage_e_dagster.db.judgement.consensus_store import state_counts
from stage_e_dagster.db.runs import ledger


@dataclass(frozen=True)
class StageEOutcome:
    counters: dict[str, Any]
    closed: bool  # False: the row was missing or already closed (left as it was)


def run_stage_e(engine: Engine, run_id: str, card_ids: Sequence[int]) -> StageEOutcome:
    """Count the batch's consensus states and close its ledger row `completed` with them (the close, and the
    deferral of any card still owed work, is one transaction)."""
    with engine.connect() as conn:
        counters: dict[str, Any] = state_counts(conn, card_ids)
        row = ledger.get(conn, run_id)
    elapsed = (datetime.now(UTC) - row.started_at).total_seconds() if row else None
    counters["elapsed_seconds"] = round(elapsed, 3) if elapsed is not None else None
    with engine.begin() as conn:
        closed = ledger.close(conn, run_id, "completed", {"stage_e": counters})
    return StageEOutcome(counters, closed)
