"""The project's definitions bound to a test database: the production resource set with overrides, and the real
`micro_batch` and `stream_drain` jobs over it."""

from __future__ import annotations

from typing import Any

from dagster import Definitions, JobDefinition

from stage_e_dagster.job_contracts import MICRO_BATCH
from stage_e_dagster.jobs import micro_batch, stream_drain
from stage_e_dagster.resources.consensus import Consensus
from stage_e_dagster.resources.database import AppDatabase
from stage_e_dagster.resources.envelope import Envelope
from stage_e_dagster.resources.ocr_engine import OcrSettings
from stage_e_dagster.resources.ocr_slots import OcrSlots
from stage_e_dagster.resources.remote import RemoteFetch
from stage_e_dagster.resources.stream import StreamControl


def resources(db_url: str, **overrides: Any) -> dict[str, Any]:
    """The production resource set pointed at a test database: two OCR slots, one quick throttle retry, a
    host-load ceiling no shared host reaches (the envelope is overridden where it is the subject), batches of 25,
    draining runs that stop after a second idle and workers that close half a second after their last card."""
    database = AppDatabase(database_url=db_url)
    base: dict[str, Any] = {
        "database": database,
        "ocr_slots": OcrSlots(database=database, max_slots=2),
        "ocr": OcrSettings(throttle_retries=1, throttle_backoff_seconds=1),
        "envelope": Envelope(database=database, host_load_ceiling=1000.0),
        "stream": StreamControl(batch_size=25, drain_idle_seconds=1.0, worker_grace_seconds=0.5),
        "consensus": Consensus(),
        "remote": RemoteFetch(),
    }
    base.update(overrides)
    return base


def micro_batch_job(db_url: str, **overrides: Any) -> JobDefinition:
    """The real `micro_batch` job (its three stage assets) bound to `resources(db_url, **overrides)`."""
    return stage_definitions(db_url, **overrides).resolve_job_def(MICRO_BATCH)


def stage_definitions(db_url: str, **overrides: Any) -> Definitions:
    """The three stage assets with the `micro_batch` and `stream_drain` jobs, bound to test resources."""
    from stage_e_dagster.assets.stage_c import image_evidence
    from stage_e_dagster.assets.stage_d import printing_votes
    from stage_e_dagster.assets.stage_e import dispatch_outcome

    return Definitions(assets=[image_evidence, printing_votes, dispatch_outcome], jobs=[micro_batch, stream_drain],
                       resources=resources(db_url, **overrides))
