"""Asset checks: the design's invariants, checked in production against the whole database.

Each check is attached to the asset whose work keeps the invariant and calls one query of `db/reporting/invariants.py`.
They run in the `invariant_checks` job (on the `invariant_checks` schedule, or "Execute checks" in the UI), not inside
every micro-batch. A broken invariant fails loudly: the check fails with ERROR severity, shows red on its asset, and
(being blocking) fails its run. Metadata: `violations` (a stable number Dagster plots) and a sample of the rows."""

# No `from __future__ import annotations`: Dagster resolves config and resource annotations at runtime.
from collections.abc import Callable
from typing import Any

from dagster import AssetCheckResult, AssetCheckSeverity, MetadataValue, asset_check

from stage_e_dagster.db.reporting import invariants
from stage_e_dagster.db.reporting.invariants import Violations
from stage_e_dagster.job_contracts import DISPATCH_OUTCOME, PRINTING_VOTES
from stage_e_dagster.resources.consensus import Consensus
from stage_e_dagster.resources.database import AppDatabase
from stage_e_dagster.resources.envelope import Envelope
from stage_e_dagster.resources.stream import StreamControl


def _markdown(rows: list[dict[str, Any]]) -> str:
    columns = list(rows[0])
    lines = ["| " + " | ".join(columns) + " |", "|" + " --- |" * len(columns)]
    lines += ["| " + " | ".join(str(row[c]) for c in columns) + " |" for row in rows]
    return "\n".join(lines)


def _read(database: AppDatabase, query: Callable[..., Violations], *args: Any) -> Violations:
    """Run one invariant query on a connection of the application database."""
    with database.engine.connect() as conn:
        return query(conn, *args)


def result(found: Violations, what: str, **metadata: Any) -> AssetCheckResult:
    """Passed when nothing breaks the invariant; else ERROR, saying how many rows and showing some."""
    values: dict[str, Any] = {"violations": MetadataValue.int(found.count), **metadata}
    if found.sample:
        values["sample"] = MetadataValue.md(_markdown(found.sample))
    description = f"{found.count} {what}" if found.count else None
    return AssetCheckResult(passed=found.count == 0, severity=AssetCheckSeverity.ERROR, metadata=values,
                            description=description)


@asset_check(asset=PRINTING_VOTES, name="no_duplicate_votes", blocking=True,
             description="No voter holds more than one current vote on a card (re-runs and races add none).")
def no_duplicate_votes(database: AppDatabase) -> AssetCheckResult:
    return result(_read(database, invariants.duplicate_votes), "(card, voter) pairs hold more than one vote")


@asset_check(asset=PRINTING_VOTES, name="no_machine_only_resolution", blocking=True,
             description="Under the funnel policy no card is resolved (or judged no match) by machine votes alone.")
def no_machine_only_resolution(database: AppDatabase, consensus: Consensus) -> AssetCheckResult:
    if consensus.policy != "funnel":
        return AssetCheckResult(passed=True, metadata={"violations": MetadataValue.int(0), "policy": consensus.policy},
                                description=f"not applicable under the {consensus.policy} policy")
    return result(_read(database, invariants.settled_without_human), "cards settled without a human vote",
                  policy=consensus.policy)


@asset_check(asset=DISPATCH_OUTCOME, name="completed_batches_have_every_stage", blocking=True,
             description="No ledger row is `completed` without the counters of Stage C, D and E.")
def completed_batches_have_every_stage(database: AppDatabase) -> AssetCheckResult:
    return result(_read(database, invariants.completed_without_counters),
                  "completed ledger rows lack a stage's counters")


@asset_check(asset=DISPATCH_OUTCOME, name="no_stale_open_trip", blocking=True,
             description="No envelope trip stays unacknowledged longer than STAGE_E_TRIP_MAX_OPEN_SECONDS.")
def no_stale_open_trip(database: AppDatabase, envelope: Envelope) -> AssetCheckResult:
    age = envelope.trip_max_open_seconds
    return result(_read(database, invariants.trips_open_longer_than, age),
                  f"envelope trips open longer than {age:g} s: the stream is halted (stage-e trips ack)",
                  max_open_seconds=MetadataValue.float(float(age)))


@asset_check(asset=DISPATCH_OUTCOME, name="no_silent_running_batch", blocking=True,
             description="No `running` ledger row went without a heartbeat longer than the reclaim age "
                         "(STAGE_E_RECLAIM_AFTER_SECONDS): dead batches are reclaimed.")
def no_silent_running_batch(database: AppDatabase, stream: StreamControl) -> AssetCheckResult:
    age = stream.reclaim_after_seconds
    return result(_read(database, invariants.running_silent_longer_than, age),
                  f"running ledger rows silent longer than {age:g} s, not reclaimed",
                  reclaim_after_seconds=MetadataValue.float(float(age)))


ASSET_CHECKS = [no_duplicate_votes, no_machine_only_resolution, completed_batches_have_every_stage,
                    no_stale_open_trip, no_silent_running_batch]
