"""Register a directory's card scans as `card` rows: idempotent, change-aware, and never crashing on bad files.

A file is fingerprinted (read in full, hashed) unless the caller trusts what is stored about it: with `trust_before`
(a POSIX time), a known file whose size equals the stored size and whose modification and inode-change times are
both older than that is counted unchanged without being read. The inode-change time catches a file replaced by one
with an old modification time (as `cp -p` or `mv` leave it), since nobody can set it back. Sources synced by event
pass the previous sync's start (`db.intake.sources`), so a sync reads the files that appeared or changed since, not the
whole directory.

`ingest_directory` takes an engine: it commits batch by batch on one connection of its own (which holds its temp
table), so a long ingest keeps what it did; `ensure_source` runs in the caller's transaction.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import Connection, Engine, func, text, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.exc import SQLAlchemyError

from stage_e_dagster.db.arrays import text_array
from stage_e_dagster.db.core.models import Card, Source
from stage_e_dagster.domain.catalog import normalise_name
from stage_e_dagster.domain.evidence.model import EvidenceSkip
from stage_e_dagster.domain.kinds import Conventions, classify, name_and_hint
from stage_e_dagster.domain.scan_files import FoundFile, Refused, content_phash, find_images, read_scan, sha256_of

BATCH_SIZE = 200


@dataclass
class IngestSummary:
    new: int = 0
    changed: int = 0
    unchanged: int = 0
    trusted: int = 0  # of `unchanged`: counted so by size and modification time, without reading the file
    unreadable: list[str] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)
    vanished: list[str] = field(default_factory=list)

    def line(self) -> str:
        return (
            f"{self.new} new, {self.changed} changed, {self.unchanged} unchanged, "
            f"{len(self.unreadable)} unreadable, {len(self.refused)} refused, {len(self.vanished)} vanished"
        )


def ensure_source(conn: Connection, key: str, location: Path) -> int:
    """Register directory `location` as source `key` (moving the key there if it pointed elsewhere); its id."""
    stmt = insert(Source).values(key=key, kind="directory", location=str(location))
    stmt = stmt.on_conflict_do_update(index_elements=[Source.key], set_={"location": stmt.excluded.location})
    return conn.execute(stmt.returning(Source.id)).scalar_one()


def ingest_directory(
    engine: Engine,
    root: Path,
    source_key: str,
    *,
    on_file: Callable[[str], None] | None = None,
    trust_before: float | None = None,
    conventions: Conventions | None = None,
) -> IngestSummary:
    """Register every image under `root` as a card of source `source_key`; `on_file` is called per file seen.
    `trust_before`: see the module docstring (None reads every file). `conventions`: the source conventions that
    give each card its kind, language and tags (`domain.kinds`; None: the settings' own); every file seen, read or
    trusted, takes the values they give, so a re-sync after the conventions changed updates every card.

    Memory stays flat whatever the number of files: files are handled `BATCH_SIZE` at a time, each batch looking up
    only its own stored rows, and the identifiers seen go to a temp table on the same connection, whose anti-join
    with the source's cards names the vanished ones at the end."""
    root = root.resolve()
    if not root.is_dir():
        raise NotADirectoryError(f"{root} is not a directory")
    if conventions is None:
        from stage_e_dagster.settings import conventions as settings_conventions

        conventions = settings_conventions()
    with engine.begin() as conn:
        source_id = ensure_source(conn, source_key, root)
    summary = IngestSummary()
    with engine.connect() as conn:
        conn.execute(text(f"DROP TABLE IF EXISTS pg_temp.{_SEEN}"))
        conn.execute(text(f"CREATE TEMP TABLE {_SEEN} (identifier text PRIMARY KEY)"))
        conn.commit()
        try:
            batch: list[FoundFile] = []
            for item in find_images(root):
                if isinstance(item, Refused):
                    summary.refused.append((item.identifier, item.reason))
                    continue
                batch.append(item)
                if len(batch) >= BATCH_SIZE:
                    _ingest_batch(conn, root, source_id, batch, summary, on_file, trust_before, conventions)
                    batch = []
            _ingest_batch(conn, root, source_id, batch, summary, on_file, trust_before, conventions)
            summary.vanished = _mark_vanished(conn, source_id)
        finally:
            with suppress(SQLAlchemyError):  # a lost connection takes its temp table with it; keep the first error
                conn.rollback()
                conn.execute(text(f"DROP TABLE IF EXISTS pg_temp.{_SEEN}"))
                conn.commit()
    return summary


_SEEN = "ingest_seen"
"""The temp table of the identifiers one ingest saw (one per connection, dropped when the ingest ends)."""
_STORED = text("SELECT identifier, content_sha256, missing_since, size_bytes FROM card "
               "WHERE source_id = :source AND identifier = ANY(CAST(:ids AS text[]))")


def _ingest_batch(conn: Connection, root: Path, source_id: int, batch: list[FoundFile], summary: IngestSummary,
                  on_file: Callable[[str], None] | None, trust_before: float | None,
                  conventions: Conventions) -> None:
    """Fingerprint one batch of files against their stored rows, upsert the new and changed ones, clear the
    missing mark of the ones that came back, bring every one's kind, language and tags in line with the
    conventions, and record them as seen; one transaction."""
    if not batch:
        return
    identifiers = text_array(item.identifier for item in batch)
    conn.execute(text(f"INSERT INTO {_SEEN} SELECT unnest(CAST(:ids AS text[])) ON CONFLICT DO NOTHING"),
                 {"ids": identifiers})
    stored = {row.identifier: row for row in conn.execute(_STORED, {"source": source_id, "ids": identifiers})}
    pending: list[dict] = []
    for item in batch:
        known = stored.get(item.identifier)
        if trust_before is not None and _trusted(item, known.size_bytes if known else None, trust_before):
            summary.unchanged += 1
            summary.trusted += 1
            if on_file:
                on_file(item.identifier)
            continue
        row = _fingerprint(item, source_id, summary, root, conventions)
        if on_file:
            on_file(item.identifier)
        if row is None:
            continue
        if known is not None and known.content_sha256 == row["content_sha256"]:
            summary.unchanged += 1
            continue
        if known is None:
            summary.new += 1
        else:
            summary.changed += 1
        pending.append(row)
    _upsert(conn, pending)
    _classify(conn, source_id, batch, conventions)
    back = [identifier for identifier, row in stored.items() if row.missing_since is not None]
    if back:
        conn.execute(update(Card).where(Card.source_id == source_id, Card.identifier.in_(back))
                     .values(missing_since=None))
    conn.commit()


def _trusted(item: FoundFile, stored_size: int | None, trust_before: float) -> bool:
    """A known file of the stored size, last modified and moved before `trust_before`: its fingerprint stands."""
    if stored_size is None:
        return False
    try:
        stat = item.path.stat()
    except OSError:
        return False
    return stat.st_size == stored_size and max(stat.st_mtime, stat.st_ctime) < trust_before


_CLASSIFY = text(
    """
    UPDATE card AS c SET kind = v.kind, language = v.language, tags = string_to_array(v.tags, ','),
           updated_at = now()
    FROM unnest(CAST(:ids AS text[]), CAST(:kinds AS text[]), CAST(:languages AS text[]), CAST(:tags AS text[]))
         AS v(identifier, kind, language, tags)
    WHERE c.source_id = :source AND c.identifier = v.identifier
      AND (c.kind, c.language, c.tags) IS DISTINCT FROM (v.kind, v.language, string_to_array(v.tags, ','))
    """
)


def _classify(conn: Connection, source_id: int, batch: list[FoundFile], conventions: Conventions) -> None:
    """Set the batch's cards' kind, language and tags to what the conventions say of their paths, where they differ
    (the work rule's trigger then has Stage D judge a changed card again)."""
    uploads = [classify(item.identifier, conventions) for item in batch]
    conn.execute(_CLASSIFY, {
        "source": source_id,
        "ids": text_array(item.identifier for item in batch),
        "kinds": text_array(u.kind for u in uploads),
        "languages": text_array(u.language for u in uploads),
        "tags": text_array(",".join(sorted(u.tags)) for u in uploads),
    })


def _fingerprint(item: FoundFile, source_id: int, summary: IngestSummary, root: Path,
                 conventions: Conventions) -> dict | None:
    data = read_scan(root, item.path)
    if isinstance(data, EvidenceSkip):
        summary.refused.append((item.identifier, data.reason))
        return None
    phash = content_phash(io.BytesIO(data)) if data else None
    if phash is None:
        summary.unreadable.append(item.identifier)
    name, hint = name_and_hint(item.identifier, conventions)
    upload = classify(item.identifier, conventions)
    return {
        "source_id": source_id,
        "identifier": item.identifier,
        "name": name,
        "name_normalised": normalise_name(name),
        "expansion_hint": hint,
        "content_sha256": sha256_of(data),
        "content_phash": phash,
        "size_bytes": len(data),
        "kind": upload.kind,
        "language": upload.language,
        "tags": sorted(upload.tags),
    }


def _upsert(conn: Connection, rows: list[dict]) -> None:
    if not rows:
        return
    stmt = insert(Card).values(rows)
    stmt = stmt.on_conflict_do_update(
        constraint="uq_card_source_identifier",
        set_={
            "name": stmt.excluded.name,
            "name_normalised": stmt.excluded.name_normalised,
            "expansion_hint": stmt.excluded.expansion_hint,
            "content_sha256": stmt.excluded.content_sha256,
            "content_phash": stmt.excluded.content_phash,
            "size_bytes": stmt.excluded.size_bytes,
            "kind": stmt.excluded.kind,
            "language": stmt.excluded.language,
            "tags": stmt.excluded.tags,
            "missing_since": None,
            "updated_at": func.now(),
        },
    )
    conn.execute(stmt)


def _mark_vanished(conn: Connection, source_id: int) -> list[str]:
    """Mark the source's cards this ingest did not see as missing (from now, unless they already were); their
    identifiers, sorted."""
    unseen = f"c.source_id = :source AND NOT EXISTS (SELECT 1 FROM {_SEEN} s WHERE s.identifier = c.identifier)"
    conn.execute(text(f"UPDATE card AS c SET missing_since = now() WHERE {unseen} AND c.missing_since IS NULL"),
                 {"source": source_id})
    listed = text(f'SELECT c.identifier FROM card AS c WHERE {unseen} ORDER BY c.identifier COLLATE "C"')
    vanished = list(conn.execute(listed, {"source": source_id}).scalars())
    conn.commit()
    return vanished
