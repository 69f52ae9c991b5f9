"""What the stream's sensors decide each tick: whether a draining run must be started for the owed cards.

Cards are owed when the work queue offers any (new cards, a retry whose wait is over, halted cards once no trip is
open). A draining run is requested when cards are owed, nothing gates the stream, and fewer than `drain_runs`
draining runs are queued or going. Both `card_stream` and `source_inbox` ask; two requests in the same moment start
at most one draining run too many, which claims nothing another holds and ends when idle.
"""

from __future__ import annotations

import time

from dagster import DagsterInstance, RunRequest
from sqlalchemy import Engine

from stage_e_dagster.control.gates import halt_reason
from stage_e_dagster.control.run_queue import active_drains
from stage_e_dagster.db.work.queue import has_offered
from stage_e_dagster.job_contracts import STREAM_DRAIN


def drain_requests(instance: DagsterInstance, engine: Engine, *, streaming: bool, drain_runs: int, asked_by: str,
                   now: float | None = None) -> tuple[list[RunRequest], str]:
    """The draining runs to request now (usually none or one), and what the tick says."""
    halted = halt_reason(engine, streaming)
    if halted:
        return [], halted
    with engine.connect() as conn:
        if not has_offered(conn):
            return [], "no card needs work outside the running batches"
    active = active_drains(instance)
    if active >= drain_runs:
        return [], f"{active} draining run(s) take the owed cards"
    stamp = f"{time.time() if now is None else now:.3f}"
    requests = [RunRequest(job_name=STREAM_DRAIN, run_key=f"{asked_by}:{stamp}:{index}",
                           tags={"stage_e/asked_by": asked_by}) for index in range(drain_runs - active)]
    return requests, f"cards are owed: {len(requests)} draining run(s) requested"
