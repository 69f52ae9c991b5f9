"""A remote source's listing in the database: new, changed and vanished objects from the store's change tokens, with
nothing downloaded but the listing itself. This module holds the SQL only; the requests that list a store or read a
manifest are the caller's (`remote.listing` hands them in as `Pages` and `Manifest`), so the state layer never
reaches the wire.

An S3 source is listed in key order, one page (one request, up to 1000 keys) at a time, and each page is merged with
the stored cards of the same key range in one transaction, which also stores the pass's position (`list_cursor`).
So a pass holds one page in memory whatever the bucket's size, and a pass cut short (a tick's time budget spent, a
killed process) resumes at the next page. Keys the page does not hold but the stored range does have vanished; at
the end of the listing so has every stored key beyond the last page. A complete pass stores when it started
(`synced_at`); the next one starts once `interval` seconds passed.

A manifest is fetched with its validator (If-None-Match / If-Modified-Since), so an unchanged one costs a 304. A
changed one is streamed and parsed entry by entry; the identifiers seen go to a temp table (as a directory ingest
does) whose anti-join names the vanished cards once the whole manifest was read. A manifest too big for a tick's
budget is left to a `sync_sources` run (`too_big`), which has no budget.

New and changed objects become cards whose bytes are unknown (`content_sha256` NULL, or the manifest's declared
hash as a provisional identity; `content_verified` false): Stage C fetches them. A full sync also re-opens the
source's cards whose fetch failed for good (forbidden, broken), once a day by the `source_resync` schedule.

Functions take an engine: each page (or manifest batch) commits on its own.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import Connection, Engine, text

from stage_e_dagster.db.arrays import int_array, text_array
from stage_e_dagster.db.intake.ingest import IngestSummary
from stage_e_dagster.domain.catalog import normalise_name
from stage_e_dagster.domain.filenames import parse_card_filename
from stage_e_dagster.domain.remote import Listed, ManifestEntry, file_name_of

MANIFEST_BATCH = 500
REOPENED_BY_FULL_SYNC = ("fetch-forbidden", "fetch-refused", "fetch-truncated", "fetch-corrupt", "fetch-too-large",
                         "fetch-timeout", "fetch-error")
"""Final fetch skips a full sync gives another chance (`fetch-gone` needs none: the listing decides)."""

Pages = Callable[[str | None], Iterator[list[Listed]]]
"""Lists a source's objects after a key (all when None), in key order, one page at a time."""
Manifest = Callable[[str | None], "tuple[str | None, Iterator[ManifestEntry | tuple[int, str]]] | None"]
"""Reads a manifest given its last validator: (new validator, entries), or None when it is unchanged."""


def _storable(key: str) -> bool:
    """Whether a listed key can be a cursor or a query parameter (no NUL, valid UTF-8)."""
    if "\x00" in key:
        return False
    try:
        key.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@dataclass
class RemotePass:
    """What one call did: counts, whether the pass completed, pages listed, and whether it ran out of budget."""

    summary: IngestSummary
    complete: bool = False
    pages: int = 0
    listed: int = 0
    out_of_budget: bool = False
    unchanged: bool = False


def reopen_failed(conn: Connection, source_id: int) -> int:
    """Give the source's cards whose fetch failed for good (forbidden, broken) another chance; how many."""
    return conn.execute(text("UPDATE card SET fetch_failed = NULL, fetch_attempts = 0 WHERE source_id = :s "
                             "AND fetch_failed = ANY(CAST(:reasons AS text[]))"),
                        {"s": source_id, "reasons": text_array(REOPENED_BY_FULL_SYNC)}).rowcount


_UPSERT = text(
    """
    INSERT INTO card (source_id, identifier, name, name_normalised, expansion_hint, content_sha256, size_bytes,
                      remote_token, remote_url, content_verified)
    SELECT :s, u.identifier, u.name, u.name_normalised, u.hint, u.sha, u.size, u.token, u.url, false
    FROM unnest(CAST(:ids AS text[]), CAST(:names AS text[]), CAST(:normalised AS text[]), CAST(:hints AS text[]),
                CAST(:shas AS text[]), CAST(:sizes AS bigint[]), CAST(:tokens AS text[]), CAST(:urls AS text[]))
         AS u(identifier, name, name_normalised, hint, sha, size, token, url)
    ON CONFLICT ON CONSTRAINT uq_card_source_identifier DO UPDATE SET
        name = EXCLUDED.name, name_normalised = EXCLUDED.name_normalised, expansion_hint = EXCLUDED.expansion_hint,
        content_sha256 = EXCLUDED.content_sha256, content_phash = NULL, size_bytes = EXCLUDED.size_bytes,
        remote_token = EXCLUDED.remote_token, remote_url = EXCLUDED.remote_url, content_verified = false,
        fetch_failed = NULL, fetch_attempts = 0, missing_since = NULL, updated_at = now()
    """
)


def _upsert(conn: Connection, source_id: int, listed: list[Listed]) -> None:
    """Insert the new objects and give the changed ones their new token: bytes unknown until fetched (one
    statement, arrays as parameters)."""
    if not listed:
        return
    parsed = [parse_card_filename(_file_name(item)) for item in listed]
    conn.execute(_UPSERT, {
        "s": source_id, "ids": text_array(i.identifier for i in listed), "names": text_array(n for n, _ in parsed),
        "normalised": text_array(normalise_name(n) for n, _ in parsed), "hints": text_array(h for _, h in parsed),
        "shas": text_array(i.sha256 for i in listed), "sizes": int_array(i.size for i in listed),
        "tokens": text_array(i.token for i in listed), "urls": text_array(i.url for i in listed)})


def _file_name(item: Listed) -> str:
    return file_name_of(item.identifier, item.url)


_STORED = text("SELECT identifier, remote_token, missing_since FROM card WHERE source_id = :s "
               "AND identifier = ANY(CAST(:ids AS text[]))")


def merge_listed(conn: Connection, source_id: int, listed: list[Listed], summary: IngestSummary) -> None:
    """Upsert the new and changed objects of `listed`, clear the missing mark of those that came back; count them."""
    if not listed:
        return
    stored = {row.identifier: row for row in conn.execute(_STORED, {"s": source_id,
                                                                    "ids": text_array(i.identifier for i in listed)})}
    pending, back = [], []
    for item in listed:
        known = stored.get(item.identifier)
        if known is None:
            summary.new += 1
            pending.append(item)
        elif known.remote_token != item.token:
            summary.changed += 1
            pending.append(item)
        else:
            summary.unchanged += 1
            summary.trusted += 1
            if known.missing_since is not None:
                back.append(item.identifier)
    _upsert(conn, source_id, pending)
    if back:
        conn.execute(text("UPDATE card SET missing_since = NULL WHERE source_id = :s "
                          "AND identifier = ANY(CAST(:ids AS text[]))"), {"s": source_id, "ids": text_array(back)})


_VANISHED_RANGE = text(
    'UPDATE card SET missing_since = now() WHERE source_id = :s AND remote_token IS NOT NULL '
    'AND missing_since IS NULL AND identifier COLLATE "C" > :after '
    'AND (CAST(:upto AS text) IS NULL OR identifier COLLATE "C" <= :upto) '
    'AND NOT (identifier = ANY(CAST(:ids AS text[]))) RETURNING identifier'
)


def _page(conn: Connection, source_id: int, after: str, page: list[Listed], upto: str | None,
          summary: IngestSummary) -> None:
    """Merge one listing page (or, with `page` empty and `upto` None, the end of the listing) in the key range
    (after, upto], and move the pass's cursor to `upto`."""
    merge_listed(conn, source_id, page, summary)
    gone = conn.execute(_VANISHED_RANGE, {"s": source_id, "after": after, "upto": upto,
                                          "ids": text_array(i.identifier for i in page)}).scalars().all()
    summary.vanished.extend(sorted(gone))
    conn.execute(text("UPDATE source SET list_cursor = :cursor WHERE id = :s"),
                 {"cursor": upto if upto is not None else after, "s": source_id})


def due(synced_at: datetime | None, list_cursor: str | None, interval_seconds: float, now: datetime) -> bool:
    """Whether a remote source should be listed now: a pass is under way, or the last one started long enough ago."""
    return list_cursor is not None or synced_at is None or (now - synced_at).total_seconds() >= interval_seconds


def list_s3(engine: Engine, source_id: int, pages: Pages, *, full: bool = False,
            budget_seconds: float | None = None) -> RemotePass:
    """Continue (or start) the source's listing pass; stop at the end of the listing, or after the page during which
    `budget_seconds` ran out. `full` starts a new pass from the first key and re-opens failed fetches."""
    started = time.monotonic()
    result = RemotePass(IngestSummary())
    with engine.begin() as conn:
        row = conn.execute(text("SELECT list_cursor FROM source WHERE id = :s FOR UPDATE"), {"s": source_id}).one()
        cursor = row.list_cursor
        if full or cursor is None:
            cursor = ""
            conn.execute(text("UPDATE source SET list_cursor = '', list_started_at = :now WHERE id = :s"),
                         {"now": datetime.now(UTC), "s": source_id})
        if full:
            reopen_failed(conn, source_id)
    for listed in pages(cursor or None):
        listed = sorted(listed, key=lambda item: item.identifier.encode("utf-8", "surrogateescape"))
        page = [item for item in listed if item.refused is None]
        for item in listed:
            if item.refused is not None:
                result.summary.refused.append((printable_key(item.identifier), item.refused))
        bounds = [item.identifier for item in listed if _storable(item.identifier)]
        if not bounds:
            continue
        upto = bounds[-1]
        with engine.begin() as conn:
            _page(conn, source_id, cursor, page, upto, result.summary)
        cursor = upto
        result.pages += 1
        result.listed += len(page)
        if budget_seconds is not None and time.monotonic() - started >= budget_seconds:
            result.out_of_budget = True
            return result
    with engine.begin() as conn:
        _page(conn, source_id, cursor, [], None, result.summary)
        conn.execute(text("UPDATE source SET synced_at = coalesce(list_started_at, now()), list_cursor = NULL, "
                          "list_started_at = NULL WHERE id = :s"), {"s": source_id})
    result.complete = True
    return result


_SEEN = "remote_seen"


def printable_key(key: str) -> str:
    """A refused key as it may be shown and stored: control characters and bytes that are not UTF-8 escaped."""
    shown = key.encode("utf-8", "backslashreplace").decode("utf-8")
    return "".join(ch if ch.isprintable() else f"\\x{ord(ch):02x}" for ch in shown)


def list_manifest(engine: Engine, source_id: int, validator: str | None, manifest: Manifest, *, full: bool = False,
                  budget_seconds: float | None = None) -> RemotePass:
    """Read the manifest (unless it is unchanged since `validator`; `full` reads it anyway) and merge it with the
    source's cards; a manifest not read within `budget_seconds` is left for a run without a budget."""
    started, moment = time.monotonic(), datetime.now(UTC)
    result = RemotePass(IngestSummary())
    read = manifest(None if full else validator)
    if read is None:
        with engine.begin() as conn:
            conn.execute(text("UPDATE source SET synced_at = :now WHERE id = :s"), {"now": moment, "s": source_id})
        result.complete = result.unchanged = True
        return result
    new_validator, entries = read
    with engine.connect() as conn:
        conn.execute(text(f"DROP TABLE IF EXISTS pg_temp.{_SEEN}"))
        conn.execute(text(f"CREATE TEMP TABLE {_SEEN} (identifier text PRIMARY KEY)"))
        conn.commit()
        try:
            batch: list[Listed] = []
            for entry in entries:
                if isinstance(entry, tuple):
                    result.summary.refused.append((f"entry {entry[0]}", entry[1]))
                    continue
                batch.append(Listed(entry.identifier, entry.token, entry.size, entry.url, entry.sha256))
                if len(batch) >= MANIFEST_BATCH:
                    _manifest_batch(conn, source_id, batch, result)
                    batch = []
                    if budget_seconds is not None and time.monotonic() - started >= budget_seconds:
                        result.out_of_budget = True
                        return result
            _manifest_batch(conn, source_id, batch, result)
            unseen = (f"c.source_id = :s AND c.remote_token IS NOT NULL AND c.missing_since IS NULL AND NOT EXISTS "
                      f"(SELECT 1 FROM {_SEEN} s WHERE s.identifier = c.identifier)")
            gone = conn.execute(text(f"UPDATE card AS c SET missing_since = now() WHERE {unseen} "
                                     "RETURNING c.identifier"), {"s": source_id}).scalars().all()
            result.summary.vanished.extend(sorted(gone))
            if full:
                reopen_failed(conn, source_id)
            conn.execute(text("UPDATE source SET synced_at = :now, list_token = :token WHERE id = :s"),
                         {"now": moment, "token": new_validator, "s": source_id})
            conn.commit()
            result.complete = True
            return result
        finally:
            conn.rollback()
            conn.execute(text(f"DROP TABLE IF EXISTS pg_temp.{_SEEN}"))
            conn.commit()


def _manifest_batch(conn: Connection, source_id: int, batch: list[Listed], result: RemotePass) -> None:
    """Take one batch of manifest entries in (a name listed twice is refused after its first entry); one commit."""
    if not batch:
        return
    fresh = set(conn.execute(text(f"INSERT INTO {_SEEN} SELECT unnest(CAST(:ids AS text[])) ON CONFLICT DO NOTHING "
                                  "RETURNING identifier"), {"ids": text_array(i.identifier for i in batch)}).scalars())
    kept, seen = [], set()
    for item in batch:
        if item.identifier in fresh and item.identifier not in seen:
            kept.append(item)
            seen.add(item.identifier)
        else:
            result.summary.refused.append((item.identifier, "listed twice in the manifest"))
    merge_listed(conn, source_id, kept, result.summary)
    result.listed += len(batch)
    conn.commit()
