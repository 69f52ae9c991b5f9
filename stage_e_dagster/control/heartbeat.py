"""How often a running batch proves it is alive, so the reaper can tell a slow batch from a dead one."""

from __future__ import annotations

import time
from collections.abc import Callable

from sqlalchemy import Engine

from stage_e_dagster.db.runs import ledger

HEARTBEAT_SECONDS = 10.0
"""Stage C heartbeats at most this often while it works (and at every stage boundary). Far below the reclaim age
(`STAGE_E_RECLAIM_AFTER_SECONDS`, default 300), so a live batch is never taken for dead, and rare enough that a
batch of hundreds of cards writes a handful of heartbeats."""


def heartbeat_every(engine: Engine, run_id: str, seconds: float = HEARTBEAT_SECONDS) -> Callable[[], None]:
    """A callable that heartbeats `run_id` at most every `seconds` (call it as often as you like)."""
    last = [time.monotonic()]

    def beat() -> None:
        now = time.monotonic()
        if now - last[0] >= seconds:
            last[0] = now
            with engine.begin() as conn:
                ledger.heartbeat(conn, run_id)

    return beat
