"""The design's invariants as queries over the whole database, for the asset checks (`assets/checks.py`).

Each query returns how many rows break the invariant and a few of them to show. They are written to stay cheap on a
large catalogue: the vote check walks the `(card_id, anonymous_id)` index, the consensus check anti-joins against the
(few) human votes, and the ledger and trip checks read tables that grow with batches and trips, not with cards.
Each runs in the caller's connection.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, text

from stage_e_dagster.domain.consensus import MACHINE_SOURCE

SAMPLE = 10
STAGE_COUNTERS = ("stage_c", "stage_d", "stage_e")
"""The counters every stage merges into its batch's ledger row; a `completed` row carries all of them."""


@dataclass(frozen=True)
class Violations:
    """How many rows break an invariant, and up to `SAMPLE` of them (column -> value)."""

    count: int
    sample: list[dict[str, Any]] = field(default_factory=list)


def _violations(conn: Connection, sql: str, params: dict[str, Any] | None = None) -> Violations:
    """Run `sql` (the rows breaking an invariant, in a stable order) and count all of them in the same scan."""
    wrapped = f"SELECT v.*, count(*) OVER () AS total_violations FROM ({sql}) AS v LIMIT :sample"
    rows = conn.execute(text(wrapped), {**(params or {}), "sample": SAMPLE}).mappings().all()
    count = int(rows[0]["total_violations"]) if rows else 0
    return Violations(count, [{k: v for k, v in row.items() if k != "total_violations"} for row in rows])


def duplicate_votes(conn: Connection) -> Violations:
    """(card, voter) pairs holding more than one current vote: a calculator casts one vote or one abstention per
    card and a person's new vote replaces their old one, so a second row (the same vote twice, or two different
    ones) means a re-run or a race added one."""
    return _violations(
        conn, "SELECT card_id, anonymous_id AS voter, count(*) AS votes FROM card_printing_tag "
        "GROUP BY card_id, anonymous_id HAVING count(*) > 1 ORDER BY card_id, anonymous_id")


def completed_without_counters(conn: Connection) -> Violations:
    """`completed` ledger rows missing a stage's counters: a batch reads completed only after every stage
    finished, and each stage records its counters as it does."""
    return _violations(
        conn, "SELECT run_id, started_at, array_to_string(ARRAY(SELECT k FROM unnest(CAST(:stages AS text[])) AS k "
        "WHERE NOT counters ? k), ',') AS missing FROM dispatch_ledger "
        "WHERE status = 'completed' AND NOT counters ?& CAST(:stages AS text[]) ORDER BY started_at, run_id",
        {"stages": list(STAGE_COUNTERS)})


def settled_without_human(conn: Connection) -> Violations:
    """Cards resolved (or judged no match) without any human vote: under the `funnel` policy machine votes never
    settle a card alone."""
    return _violations(
        conn, "SELECT c.id AS card_id, c.printing_status FROM card AS c WHERE c.printing_status <> 'unresolved' "
        "AND NOT EXISTS (SELECT 1 FROM card_printing_tag AS t WHERE t.card_id = c.id AND t.source <> :machine) "
        "ORDER BY c.id", {"machine": MACHINE_SOURCE})


def trips_open_longer_than(conn: Connection, seconds: float) -> Violations:
    """Envelope trips unacknowledged for more than `seconds`: the stream has been halted that long."""
    return _violations(
        conn, "SELECT id AS trip_id, bar, run_id, tripped_at, "
        "round(extract(epoch FROM now() - tripped_at)) AS open_seconds "
        "FROM envelope_trip WHERE acknowledged_at IS NULL AND tripped_at < now() - make_interval(secs => :age) "
        "ORDER BY tripped_at, id", {"age": float(seconds)})


def running_silent_longer_than(conn: Connection, seconds: float) -> Violations:
    """`running` ledger rows whose heartbeat is older than `seconds` (the reclaim age): the batch died and the
    reaper (card stream tick, `stage-e status`, `stage-e run`) has not reclaimed it."""
    return _violations(
        conn, "SELECT run_id, trigger, owner, heartbeat_at, "
        "round(extract(epoch FROM now() - heartbeat_at)) AS silent_seconds "
        "FROM dispatch_ledger WHERE status = 'running' AND heartbeat_at < now() - make_interval(secs => :age) "
        "ORDER BY heartbeat_at, run_id", {"age": float(seconds)})
