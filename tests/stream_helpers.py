"""Seeding for the stream and sweep tests: rows as ingest, Stage C and Stage D leave them, and queued runs; and
reading the ledger and the trips back, each read on a connection of its own."""

from __future__ import annotations

import json
import uuid

from dagster import DagsterInstance, DagsterRun, DagsterRunStatus
from dagster._core.remote_origin import InProcessCodeLocationOrigin, RemoteJobOrigin, RemoteRepositoryOrigin
from dagster._core.types.loadable_target_origin import LoadableTargetOrigin
from sqlalchemy import text

from stage_e_dagster.db.core.engine import get_engine
from stage_e_dagster.db.runs import ledger, trips
from stage_e_dagster.domain.evidence.extract import EXTRACTOR_VERSIONS
from stage_e_dagster.domain.work import DECIDED_BY
from stage_e_dagster.jobs import BatchSpec

# --- seeding (plain SQL, the way ingest, Stage C and Stage D leave rows behind) -------------------------------


def seed_cards(url: str, count: int) -> list[int]:
    """Insert `count` cards of one source in one statement (so they share `updated_at`); their ids in order."""
    with get_engine(url).begin() as conn:
        source = conn.execute(text(
            "INSERT INTO source (key, location) VALUES ('scans', '/scans') "
            "ON CONFLICT (key) DO UPDATE SET location = EXCLUDED.location RETURNING id")).scalar_one()
        ids = conn.execute(text(
            "INSERT INTO card (source_id, identifier, name, name_normalised, content_sha256, size_bytes) "
            "SELECT :source, 'f-' || md5(random()::text || g), 'Card', 'card', md5(random()::text || g), 10 "
            "FROM generate_series(1, :n) g RETURNING id"), {"source": source, "n": count}).scalars().all()
    return sorted(ids)


def add_evidence(url: str, card_id: int, versions: dict[str, str] | None = None) -> None:
    """Evidence for the card's current bytes (current extractor versions unless told otherwise)."""
    with get_engine(url).begin() as conn:
        conn.execute(text(
            "INSERT INTO image_evidence (card_id, content_sha256, extractor_versions) "
            "SELECT id, content_sha256, CAST(:v AS jsonb) FROM card WHERE id = :id"),
            {"id": card_id, "v": json.dumps(EXTRACTOR_VERSIONS if versions is None else versions)})


def mark_decided(url: str, card_id: int) -> None:
    """What Stage D leaves once its calculators decided (voted or abstained) on the card's current evidence."""
    with get_engine(url).begin() as conn:
        conn.execute(text(
            "UPDATE image_evidence e SET decided_by = :decided FROM card c "
            "WHERE c.id = e.card_id AND c.content_sha256 = e.content_sha256 AND c.id = :id"),
            {"id": card_id, "decided": DECIDED_BY})


def add_scan_log(url: str, card_id: int, voter: str, reason: str, for_current_bytes: bool = True) -> None:
    with get_engine(url).begin() as conn:
        conn.execute(text(
            "INSERT INTO card_scan_log (card_id, anonymous_id, skip_reason, evidence_key) "
            "SELECT id, :voter, :reason, CASE WHEN :current THEN content_sha256 ELSE 'old' END FROM card "
            "WHERE id = :id"), {"id": card_id, "voter": voter, "reason": reason, "current": for_current_bytes})


def reingest(url: str, card_id: int) -> None:
    """What ingest does when a file's bytes change: a new content hash and a fresh `updated_at`."""
    with get_engine(url).begin() as conn:
        conn.execute(text("UPDATE card SET content_sha256 = md5(random()::text), updated_at = clock_timestamp() "
                          "WHERE id = :id"), {"id": card_id})


# --- reading -------------------------------------------------------------------------------------------------


def ledger_row(url: str, run_id: str) -> ledger.LedgerRow | None:
    """The ledger row of `run_id` (None: no row)."""
    with get_engine(url).connect() as conn:
        return ledger.get(conn, run_id)


def open_trips(url: str) -> list[trips.Trip]:
    """The open envelope trips, oldest first."""
    with get_engine(url).connect() as conn:
        return trips.open_trips(conn)


# --- Dagster side ---------------------------------------------------------------------------------------------

_ORIGIN = RemoteJobOrigin(
    repository_origin=RemoteRepositoryOrigin(
        code_location_origin=InProcessCodeLocationOrigin(LoadableTargetOrigin(module_name="stage_e_dagster")),
        repository_name="__repository__",
    ),
    job_name="micro_batch",
)


def add_runs(instance: DagsterInstance, status: DagsterRunStatus, count: int, job: str = "micro_batch",
             card_ids: tuple[int, ...] = ()) -> None:
    """Put runs straight into run storage (a queued run needs a job origin, so every one gets a stand-in),
    each carrying `card_ids` as its batch."""
    config = BatchSpec(card_ids).run_config()
    for _ in range(count):
        instance.add_run(DagsterRun(job_name=job, run_id=str(uuid.uuid4()), status=status, run_config=config,
                                    remote_job_origin=_ORIGIN))
