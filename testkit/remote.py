"""Remote sources in tests: registering and syncing them against a test database, a Stage C fetcher with test limits,
and the loopback servers as context managers (`testkit.stores` holds the servers themselves)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import Engine, text

from stage_e_dagster.db.intake.sources import SourceSync, add_remote_source, list_sources
from stage_e_dagster.db.judgement.evidence_store import load_batch
from stage_e_dagster.domain.remote import Credentials, parse_location
from stage_e_dagster.domain.stage_c import CardWork, extractors_needed
from stage_e_dagster.remote.listing import sync_remote
from stage_e_dagster.stages.stage_c_fetch import FetchSettings, RemoteFetcher
from testkit.stores import HttpServer, S3Server

CREDENTIALS = "TESTSET"
"""The credential set name the tests register S3 sources with (`s3_server(configured=True)` sets its variables)."""


@contextmanager
def s3_server(configured: bool = False) -> Iterator[S3Server]:
    """moto's S3-compatible server on loopback; with `configured`, its keys are in `os.environ` as the `CREDENTIALS`
    set (the caller restores the environment: `testkit.processes.restored_environment`)."""
    server = S3Server()
    try:
        if configured:
            os.environ.update(server.credentials_env(CREDENTIALS))
        yield server
    finally:
        server.stop()


@contextmanager
def http_server() -> Iterator[HttpServer]:
    """The manifest server on loopback, with fault injection."""
    server = HttpServer()
    try:
        yield server
    finally:
        server.stop()


def add_s3(engine: Engine, key: str, server: S3Server, prefix: str = "scans") -> None:
    with engine.begin() as conn:
        add_remote_source(conn, key, parse_location(f"s3://{server.bucket}/{prefix}"), endpoint=server.endpoint,
                          credentials=CREDENTIALS)


def add_manifest(engine: Engine, key: str, server: HttpServer, *, allow_private: bool = False,
                 query: str = "") -> None:
    """Register `server`'s manifest as source `key` (`query` appended to its URL, as a signed URL's would be)."""
    with engine.begin() as conn:
        add_remote_source(conn, key, parse_location(server.manifest_url + query), allow_private=allow_private)


def sync(engine: Engine, key: str, *, full: bool = False) -> SourceSync:
    with engine.connect() as conn:
        (source,) = list_sources(conn, [key])
    return sync_remote(engine, source, full=full)


def credentials_for(server: S3Server | None):
    def lookup(name: str | None) -> Credentials | None:
        return None if name is None or server is None else Credentials(server.ACCESS_KEY, server.SECRET_KEY)

    return lookup


def make_fetcher(engine: Engine, cache: Path, server: S3Server | None = None, run_id: str | None = "test-run",
                 **settings) -> RemoteFetcher:
    """A fetcher with a fast rate and short limits unless `settings` say otherwise."""
    base = {"rate": 200.0, "concurrency": 2, "timeout_seconds": 5.0, "lockout_forbidden": 3, "broken_retries": 3,
            "recover_after": 4}
    return RemoteFetcher(engine, FetchSettings(cache_dir=cache, **{**base, **settings}), credentials_for(server),
                         run_id=run_id)


def owed(engine: Engine, key: str) -> list[tuple[CardWork, frozenset[str]]]:
    """The source's cards Stage C would fetch now, with the extractors each needs."""
    with engine.connect() as conn:
        ids = conn.execute(text("SELECT c.id FROM card c JOIN source s ON s.id = c.source_id WHERE s.key = :k "
                                "ORDER BY c.id"), {"k": key}).scalars().all()
        works = load_batch(conn, ids)
    return [(w, needed) for w in works if (needed := extractors_needed(w, False)) is not None and not w.missing]


def card_state(engine: Engine, key: str) -> dict[str, tuple]:
    """identifier -> (content_verified, fetch_failed, fetch_attempts, missing, content_sha256) of a source's cards."""
    with engine.connect() as conn:
        rows = conn.execute(text(
            "SELECT c.identifier, c.content_verified, c.fetch_failed, c.fetch_attempts, c.missing_since IS NOT NULL, "
            "c.content_sha256 FROM card c JOIN source s ON s.id = c.source_id WHERE s.key = :k"), {"k": key}).all()
    return {r[0]: tuple(r[1:]) for r in rows}


def upload_tree(server: S3Server, directory: Path, prefix: str) -> int:
    """Put every file under `directory` into the server's bucket under `prefix`, keeping relative paths; how many."""
    client = server.client()
    paths = sorted(path for path in directory.rglob("*") if path.is_file())
    for path in paths:
        client.upload_file(str(path), server.bucket, f"{prefix}/{path.relative_to(directory).as_posix()}")
    return len(paths)
