"""Fetching one remote object's bytes into this host's fetch cache: streamed, hashed as they arrive, cut off at a
size limit and a deadline, and named when it fails.

The cache holds each fetched version under its fetch key (`domain.remote.fetch_key`: source, identifier, change
token). A fetch writes a temporary file and renames it into place only once every byte arrived and the size and
declared hash check out, so a file in the cache is always a completed fetch: a process killed mid-fetch leaves no
cache file (the next attempt fetches again), and one killed after a fetch completed leaves it, so the next attempt
reads it instead of fetching again. Stage C removes a version's file once its evidence or skip is stored.
"""

from __future__ import annotations

import hashlib
import os
import time
import uuid
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path

from stage_e_dagster.domain.remote import BROKEN
from stage_e_dagster.remote.common import Body, StoreError
from stage_e_dagster.remote.limiter import FleetLimiter, Turn
from stage_e_dagster.remote.stores import HttpSource, S3Source


@dataclass(frozen=True)
class FetchJob:
    """One remote card to fetch: where (`ref`: the S3 key or the URL), which version (`key`), what it should hash
    to (a manifest's declared sha256) and how big the listing said it is."""

    card_id: int
    source_id: int
    ref: str
    key: str
    declared_sha256: str | None = None
    listed_size: int | None = None


@dataclass(frozen=True)
class FetchResult:
    """How one fetch ended: `kind` ('fetched' or a failure kind), the skip reason of a failure, the bytes' hash,
    size and cache path of a success, and whether the cache already held them (no request made)."""

    card_id: int
    kind: str
    reason: str | None = None
    status: int | None = None
    detail: str = ""
    sha256: str | None = None
    size: int | None = None
    path: Path | None = None
    cached: bool = False
    seconds: float = 0.0
    requests: int = 0
    host: str | None = None  # the host that gave the final answer (`fetch_host`'s key)


@dataclass
class FetchCache:
    """Completed fetches on this host's disk, one file per fetch key."""

    root: Path
    _made: bool = field(default=False, repr=False)

    def path(self, key: str) -> Path:
        return self.root / key[:2] / key

    def lookup(self, key: str) -> tuple[str, int] | None:
        """(sha256, size) of a completed fetch of `key`, or None."""
        try:
            with self.path(key).open("rb") as handle:
                digest, size = hashlib.sha256(), 0
                while chunk := handle.read(1024 * 1024):
                    digest.update(chunk)
                    size += len(chunk)
            return digest.hexdigest(), size
        except OSError:
            return None

    def store(self, key: str, body: Body, max_bytes: int, deadline: float, declared_sha256: str | None
              ) -> tuple[str, int]:
        """Stream `body` into the cache under `key`; (sha256, size), or a StoreError naming why not."""
        final = self.path(key)
        final.parent.mkdir(parents=True, exist_ok=True)
        partial = final.parent / f".{key}.{os.getpid()}.{uuid.uuid4().hex[:8]}.part"
        digest, size = hashlib.sha256(), 0
        try:
            with partial.open("wb") as out:
                for chunk in body.chunks:
                    size += len(chunk)
                    if size > max_bytes:
                        raise StoreError(BROKEN, "fetch-too-large", 200, f"more than {max_bytes} bytes")
                    if time.monotonic() > deadline:
                        raise StoreError(BROKEN, "fetch-timeout", 200, f"body not complete after {size} bytes")
                    digest.update(chunk)
                    out.write(chunk)
                out.flush()
                os.fsync(out.fileno())
            if body.size is not None and size != body.size:
                raise StoreError(BROKEN, "fetch-truncated", 200, f"{size} of {body.size} bytes")
            sha = digest.hexdigest()
            if declared_sha256 is not None and sha != declared_sha256:
                raise StoreError(BROKEN, "fetch-corrupt", 200, f"sha256 {sha[:16]}... is not the declared "
                                                               f"{declared_sha256[:16]}...")
            os.replace(partial, final)
            return sha, size
        finally:
            body.close()
            with suppress(OSError):
                partial.unlink()

    def remove(self, key: str) -> None:
        with suppress(OSError):
            self.path(key).unlink()

    def prune(self, max_age_seconds: float) -> int:
        """Remove cache files (and abandoned partial files) older than `max_age_seconds`; how many."""
        removed, cutoff = 0, time.time() - max_age_seconds
        for path in self.root.glob("*/*") if self.root.is_dir() else ():
            with suppress(OSError):
                if path.is_file() and path.stat().st_mtime < cutoff:
                    path.unlink()
                    removed += 1
        return removed


class _Stopped(Exception):
    """The batch stopped fetching while this request waited for its turn."""


STOPPED = "stopped"
"""A fetch never sent: the batch stopped (a lockout) while it waited for its turn. Not an outcome of the store."""


def fetch_one(job: FetchJob, source: S3Source | HttpSource, cache: FetchCache, limiter: FleetLimiter, *,
              max_bytes: int, timeout_seconds: float, stopped: Callable[[], bool] = lambda: False) -> FetchResult:
    """Fetch `job`'s bytes into `cache` (or find them there), through `limiter`; never raises a StoreError.

    `stopped` is asked after each turn is granted, before its request is sent: a request that waited for its turn
    while a lockout stopped the batch is never sent (kind `STOPPED`)."""
    started = time.monotonic()
    found = cache.lookup(job.key)
    if found is not None:
        return FetchResult(job.card_id, "fetched", sha256=found[0], size=found[1], path=cache.path(job.key),
                           cached=True)
    if job.listed_size is not None and job.listed_size > max_bytes:
        return FetchResult(job.card_id, BROKEN, "fetch-too-large", None,
                           f"listed at {job.listed_size} bytes, limit {max_bytes}")
    turns: list[Turn] = []

    def acquire() -> None:
        turn = limiter.acquire()
        if stopped():
            raise _Stopped
        turns.append(turn)

    host = None
    try:
        body = source.open(job.ref, acquire)
        host = body.host
        request_started = time.monotonic()
        if body.size is not None and body.size > max_bytes:
            body.close()
            raise StoreError(BROKEN, "fetch-too-large", 200, f"{body.size} bytes, limit {max_bytes}", host)
        sha, size = cache.store(job.key, body, max_bytes, request_started + timeout_seconds, job.declared_sha256)
        result = FetchResult(job.card_id, "fetched", sha256=sha, size=size, path=cache.path(job.key), host=host)
        if turns:
            limiter.report(turns[-1], "fetched")
    except StoreError as err:
        result = FetchResult(job.card_id, err.kind, err.reason, err.status, err.detail, host=err.host or host)
        if turns:
            limiter.report(turns[-1], err.kind)
    except _Stopped:
        result = FetchResult(job.card_id, STOPPED, detail="the batch stopped fetching before this request")
    return FetchResult(**{**result.__dict__, "seconds": round(time.monotonic() - started, 3),
                          "requests": len(turns)})
