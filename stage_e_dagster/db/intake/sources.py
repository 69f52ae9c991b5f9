"""Sources: the directories, S3-compatible prefixes and HTTP manifests card scans come from, registered once in the
`source` table, the lock a sync of one holds, and syncing a directory.

The `source` table is the one place sources are configured: `stage-e sources add DIR|URL --key K` (or `stage-e
ingest`) registers one, and the `source_inbox` sensor, the `card_sources` asset and the daily re-sync all read it.
`control.intake.sync_source` syncs a source of any kind: a directory here, a remote source by its listing
(`remote.listing`, which stores what it lists through `db.intake.remote_sync`).

A directory's sync is `db.intake.ingest.ingest_directory` over the source's directory, holding a Postgres advisory
lock on the source (`source_lock`, which a remote listing holds too) so two syncs of one source (the sensor's and the
schedule's, or a CLI ingest) take turns instead of racing. A quick sync trusts the files that did not change since
the previous sync started (size and file times, see `db.intake.ingest`); a full sync reads every file. A successful
sync stores when it started and the digest of the listing it started from (`synced_listing`), which the
`source_inbox` sensor compares with the directory's listing now. A directory that is missing or unreadable is
reported `unavailable` and left alone: an unmounted disk must not mark every card of the source vanished.

`sync_directory` takes an engine: it holds the source's lock on one connection while the ingest commits batch by
batch on another. The other functions run in the caller's connection; `add_source` is one transaction.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import Connection, Engine, text

from stage_e_dagster.db.intake.ingest import IngestSummary, ensure_source, ingest_directory
from stage_e_dagster.domain.remote import REMOTE_KINDS, RemoteLocation
from stage_e_dagster.domain.scan_files import list_images

SOURCE_LOCK_NAMESPACE = 0x53455352  # "SESR": stage-e source; the `classid` of every source sync lock
TRUST_MARGIN_SECONDS = 2.0
"""A file modified less than this before the previous sync started is read again (coarse file-system clocks)."""


@dataclass(frozen=True)
class SourceRow:
    id: int
    key: str
    kind: str
    location: str
    created_at: datetime
    synced_at: datetime | None
    synced_listing: str | None
    endpoint: str | None = None
    region: str | None = None
    credentials: str | None = None  # the credential set's name, never a secret
    list_cursor: str | None = None
    list_token: str | None = None
    fetch_ok_at: datetime | None = None
    allow_private: bool = False  # a manifest whose images may sit on private hosts off its origin

    @property
    def remote(self) -> bool:
        return self.kind in REMOTE_KINDS


_SELECT = ("SELECT id, key, kind, location, created_at, synced_at, synced_listing, endpoint, region, credentials, "
           "list_cursor, list_token, fetch_ok_at, allow_private FROM source")


def list_sources(conn: Connection, keys: Sequence[str] | None = None) -> list[SourceRow]:
    """Registered sources (every one, or those named in `keys`), by key."""
    where = " WHERE key = ANY(CAST(:keys AS text[]))" if keys else ""
    rows = conn.execute(text(f"{_SELECT}{where} ORDER BY key"), {"keys": list(keys or [])}).mappings().all()
    return [SourceRow(**row) for row in rows]


def card_counts(conn: Connection) -> dict[str, tuple[int, int]]:
    """Per source key: (cards, of which missing from the directory)."""
    sql = ("SELECT s.key, count(c.id), count(c.missing_since) FROM source s LEFT JOIN card c ON c.source_id = s.id "
           "GROUP BY s.key")
    return {key: (int(cards), int(missing)) for key, cards, missing in conn.execute(text(sql))}


def add_source(conn: Connection, key: str, directory: Path) -> tuple[SourceRow, str | None]:
    """Register `directory` as source `key`; returns the row and the previous location when `key` pointed
    elsewhere (its files are then all read again at the next sync)."""
    location = str(directory.resolve())
    before = list_sources(conn, [key])
    ensure_source(conn, key, Path(location))
    moved = before[0].location if before and before[0].location != location else None
    if moved is not None:
        conn.execute(text("UPDATE source SET synced_at = NULL, synced_listing = NULL WHERE key = :key"), {"key": key})
    return list_sources(conn, [key])[0], moved


def add_remote_source(conn: Connection, key: str, location: RemoteLocation, *, endpoint: str | None = None,
                      region: str | None = None, credentials: str | None = None, allow_private: bool = False
                      ) -> tuple[SourceRow, str | None]:
    """Register the remote `location` as source `key` with its endpoint, region, credential set's name and whether
    its manifest may point at private hosts; returns the row and the previous location when `key` pointed elsewhere
    (its next listing starts afresh; so does it when `allow_private` changed, and its refused fetches are tried
    again). A key keeps its kind: a directory's key cannot become a bucket's."""
    before = list_sources(conn, [key])
    if before and before[0].kind != location.kind:
        raise ValueError(f"source {key} is a {before[0].kind} source; register the {location.kind} source under "
                         "another key")
    conn.execute(text(
        "INSERT INTO source (key, kind, location, endpoint, region, credentials, allow_private) "
        "VALUES (:key, :kind, :location, :endpoint, :region, :credentials, :private) ON CONFLICT (key) DO UPDATE SET "
        "location = EXCLUDED.location, endpoint = EXCLUDED.endpoint, region = EXCLUDED.region, "
        "credentials = EXCLUDED.credentials, allow_private = EXCLUDED.allow_private"),
        {"key": key, "kind": location.kind, "location": location.url, "endpoint": endpoint, "region": region,
         "credentials": credentials, "private": allow_private})
    old = before[0] if before else None
    moved = None
    if old is not None and old.allow_private != allow_private:  # what it may reach changed: list and fetch anew
        conn.execute(text("UPDATE source SET list_token = NULL WHERE key = :key"), {"key": key})
        conn.execute(text("UPDATE card SET fetch_failed = NULL, fetch_attempts = 0 WHERE source_id = :s "
                          "AND fetch_failed = 'fetch-refused'"), {"s": old.id})
    if old is not None and (old.location, old.endpoint) != (location.url, endpoint):
        moved = old.location
        conn.execute(text("UPDATE source SET synced_at = NULL, list_cursor = NULL, list_started_at = NULL, "
                          "list_token = NULL, fetch_ok_at = NULL WHERE key = :key"), {"key": key})
    return list_sources(conn, [key])[0], moved


def trusted_before(source: SourceRow) -> float | None:
    """The time (POSIX seconds) before which a quick sync of `source` trusts a known file's stored fingerprint:
    the previous sync's start, less a margin for coarse file-system clocks; None (read every file) before the
    first sync."""
    if source.synced_at is None:
        return None
    return source.synced_at.timestamp() - TRUST_MARGIN_SECONDS


@dataclass
class SourceSync:
    """One source's sync: `synced` (with the ingest summary), `unavailable` (directory missing or unreadable, a store
    that refused the listing), or for a remote source `listing` (a pass under way: it resumes at the next tick)."""

    key: str
    location: str
    status: str
    full: bool
    summary: IngestSummary = field(default_factory=IngestSummary)
    seconds: float = 0.0
    kind: str = "directory"
    detail: str = ""  # a remote source: why it was not listed, or how far the listing got


@contextmanager
def source_lock(engine: Engine, source_id: int, *, wait: bool = True) -> Iterator[bool]:
    """Hold the source's sync lock (a session advisory lock on a connection of its own) for the block; yields whether
    it is held: with `wait` it always is (after the other holder let go), without it False at once while another
    process holds it."""
    key = {"ns": SOURCE_LOCK_NAMESPACE, "id": source_id}
    with engine.connect() as lock:
        if wait:
            lock.execute(text("SELECT pg_advisory_lock(:ns, :id)"), key)
            held = True
        else:
            held = bool(lock.execute(text("SELECT pg_try_advisory_lock(:ns, :id)"), key).scalar())
        lock.commit()
        try:
            yield held
        finally:
            if held:
                lock.execute(text("SELECT pg_advisory_unlock(:ns, :id)"), key)
                lock.commit()


def sync_directory(engine: Engine, source: SourceRow, *, full: bool = False,
                   on_file: Callable[[str], None] | None = None) -> SourceSync:
    """Bring the directory `source`'s cards in line with its files (see the module docstring); `on_file` per file
    seen."""
    if source.remote:
        raise ValueError(f"source {source.key} is a {source.kind} source: it is synced by its listing "
                         "(control.intake.sync_source)")
    started = datetime.now(UTC)  # before the listing: whatever changes after it is read by the next sync
    root = Path(source.location)
    listing = list_images(root)
    if listing is None:
        return SourceSync(source.key, source.location, "unavailable", full)
    trust_before = None if full else trusted_before(source)
    with source_lock(engine, source.id):
        try:
            summary = ingest_directory(engine, root, source.key, on_file=on_file, trust_before=trust_before)
        except (NotADirectoryError, PermissionError, FileNotFoundError):
            return SourceSync(source.key, source.location, "unavailable", full)
        with engine.begin() as conn:
            conn.execute(text("UPDATE source SET synced_at = :at, synced_listing = :listing WHERE id = :id"),
                         {"at": started, "listing": listing.digest, "id": source.id})
    seconds = (datetime.now(UTC) - started).total_seconds()
    return SourceSync(source.key, source.location, "synced", full, summary, round(seconds, 3))
