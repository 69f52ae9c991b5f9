"""Settings of sources and remote fetch: how much a tick reads or lists, and how remote objects are fetched."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from stage_e_dagster.setting_groups.declare import (
    non_negative_float,
    path,
    positive_float,
    positive_int,
    setting,
    share,
)


@dataclass(frozen=True)
class SourceSettings:
    """Reading sources: how much one tick reads or lists, and fetching remote objects (rate, concurrency,
    limits, lockout, recovery, the local cache)."""

    inbox_read_limit: int = setting(
        "STAGE_E_INBOX_READ_LIMIT", 300, "files one sensor tick (or one watch of a draining run) reads from a "
        "changed source; a bigger change is finished by a `sync_sources` run", positive_int)
    remote_list_seconds: float = setting(
        "STAGE_E_REMOTE_LIST_SECONDS", 3.0, "how long one `source_inbox` tick may list remote sources (S3 pages, a "
        "manifest); an S3 listing resumes from its cursor at the next tick, a manifest not read in time gets a "
        "`sync_sources` run", positive_float, shown="3")
    remote_list_interval_seconds: float = setting(
        "STAGE_E_REMOTE_LIST_INTERVAL_SECONDS", 30.0, "a remote source's listing starts again at most this often "
        "(an unchanged manifest costs one conditional request, an S3 prefix one request per 1000 objects)",
        positive_float, shown="30")
    fetch_rate: float = setting(
        "STAGE_E_FETCH_RATE", 7.0, "object fetches per second from remote sources, shared by every process on every "
        "host (listings are not counted; docs/deployment.md)", positive_float, shown="7")
    fetch_jitter_seconds: float = setting(
        "STAGE_E_FETCH_JITTER_SECONDS", 0.25, "how much later than its turn a fetch request may reach the store (a "
        "busy host, the way to the store) without the store counting more than `STAGE_E_FETCH_RATE` requests in one "
        "second: turns are `(1 + this) / rate` seconds apart (docs/deployment.md)", non_negative_float,
        shown="0.25")
    fetch_concurrency: int = setting(
        "STAGE_E_FETCH_CONCURRENCY", 4, "fetches one process has in flight at once", positive_int)
    fetch_timeout_seconds: float = setting(
        "STAGE_E_FETCH_TIMEOUT_SECONDS", 60.0, "a fetch whose bytes have not all arrived after this long is broken "
        "(`fetch-timeout`)", positive_float, shown="60")
    fetch_max_bytes: int = setting(
        "STAGE_E_FETCH_MAX_BYTES", 256 * 1024 * 1024, "a remote object larger than this is not fetched "
        "(`fetch-too-large`)", positive_int, shown="268435456 (256 MiB, the local file limit)")
    fetch_lockout_403s: int = setting(
        "STAGE_E_FETCH_LOCKOUT_403S", 5, "this many 403s in a row from a source that answered before open an "
        "envelope trip naming the source (a lockout); fewer are named skips", positive_int)
    fetch_broken_retries: int = setting(
        "STAGE_E_FETCH_BROKEN_RETRIES", 3, "fetches of a broken object (truncated, corrupt, too large, timed out) "
        "before its skip is final", positive_int)
    fetch_recover_after: int = setting(
        "STAGE_E_FETCH_RECOVER_AFTER", 20, "clean responses in a row after which a throttled (halved) fetch pace "
        "doubles again, up to `STAGE_E_FETCH_RATE`", positive_int)
    fetch_fallback_share: float = setting(
        "STAGE_E_FETCH_FALLBACK_SHARE", 0.25, "the share of `STAGE_E_FETCH_RATE` one process uses while Postgres "
        "is unreachable (keep it at most 1 / the processes that fetch at once)", share, shown="0.25")
    manifest_read_seconds: float = setting(
        "STAGE_E_MANIFEST_READ_SECONDS", 120.0, "a manifest not read in full within this long (connect, headers, "
        "body, whatever the server drips) fails its listing; a `source_inbox` tick gives it less, its own budget",
        positive_float, shown="120")
    manifest_max_bytes: int = setting(
        "STAGE_E_MANIFEST_MAX_BYTES", 128 * 1024 * 1024, "a manifest larger than this fails its listing (the source "
        "stays as it was, and says why)", positive_int, shown="134217728 (128 MiB)")
    manifest_max_entries: int = setting(
        "STAGE_E_MANIFEST_MAX_ENTRIES", 500_000, "a manifest with more entries than this fails its listing",
        positive_int, shown="500000")
    fetch_cache: Path | None = setting(
        "STAGE_E_FETCH_CACHE", None, "where fetched bytes wait for Stage C on this host (a completed fetch survives "
        "a killed run and is never fetched twice)", path, shown="`$STAGE_E_HOME/fetch_cache`")
