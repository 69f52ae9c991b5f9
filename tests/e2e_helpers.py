"""End-to-end helpers: a generated demo corpus in Postgres and the real `micro_batch` job with test resources."""

from __future__ import annotations

from pathlib import Path

from dagster import Definitions, JobDefinition

from stage_e_dagster.db.catalog.importer import import_catalog, store_symbol_hashes
from stage_e_dagster.db.core.engine import get_engine
from stage_e_dagster.db.intake.ingest import ingest_directory
from stage_e_dagster.demo.generate import generate
from stage_e_dagster.jobs import micro_batch, stream_drain
from stage_e_dagster.resources.consensus import Consensus
from stage_e_dagster.resources.database import AppDatabase
from stage_e_dagster.resources.envelope import Envelope
from stage_e_dagster.resources.ocr_engine import OcrSettings
from stage_e_dagster.resources.ocr_slots import OcrSlots
from stage_e_dagster.resources.remote import RemoteFetch
from stage_e_dagster.resources.stream import StreamControl


def load_demo(db_url: str, root: Path, cards: int = 60, printings: int = 80, seed: int = 11) -> Path:
    """Generate a demo corpus under `root`, import its catalogue and symbols, ingest its scans."""
    generate(root, printings=printings, cards=cards, seed=seed, degraded_fraction=0.2, workers=2)
    engine = get_engine(db_url)
    summary = import_catalog(engine, root / "catalog.json")
    store_symbol_hashes(engine, root / "symbols", summary)
    ingest_directory(engine, root / "scans", "demo")
    return root


def resources(db_url: str, **overrides) -> dict:
    """The production resource set pointed at a test database."""
    base = {
        "database": AppDatabase(database_url=db_url),
        "ocr_slots": OcrSlots(database=AppDatabase(database_url=db_url), max_slots=2),
        "ocr": OcrSettings(throttle_retries=1, throttle_backoff_seconds=1),
        "envelope": Envelope(database=AppDatabase(database_url=db_url), host_load_ceiling=1000.0),
        "stream": StreamControl(batch_size=25, drain_idle_seconds=1.0, worker_grace_seconds=0.5),
        "consensus": Consensus(),
        "remote": RemoteFetch(),
    }
    base.update(overrides)
    return base


def micro_batch_job(db_url: str, **overrides) -> JobDefinition:
    """The real `micro_batch` job bound to test resources."""
    return stage_definitions(db_url, **overrides).resolve_job_def("micro_batch")


def stage_definitions(db_url: str, **overrides) -> Definitions:
    """The stage assets with the `micro_batch` and `stream_drain` jobs, bound to test resources."""
    from stage_e_dagster.assets.stage_c import image_evidence
    from stage_e_dagster.assets.stage_d import printing_votes
    from stage_e_dagster.assets.stage_e import dispatch_outcome

    return Definitions(assets=[image_evidence, printing_votes, dispatch_outcome], jobs=[micro_batch, stream_drain],
                       resources=resources(db_url, **overrides))
