"""Remote scans for the review page: the fetch cache first, else one fetch that takes its turn in the fleet rate.

A card of an S3 prefix or an HTTP manifest has no file to read. Its bytes are looked for in this host's fetch cache
under the version's fetch key (`domain.remote.fetch_key`, as Stage C names them); if they are not there, one fetch
goes out exactly as Stage C's do (`remote.fetch.fetch_one`): it waits for its turn from the shared limiter, halves
the pace on a throttle, is held to the source's address rule and the fetch deadline, and lands in the cache, so the
crops and the thumbnail of the same card read it from there. Its outcome counts like any other fetch: an answer
marks the host as one that answered, and a 403 adds to the host's streak (it may complete a lockout, which opens
its trip); no card is skipped for it. While a lockout trip naming the host is open, nothing is fetched.

The bytes must hash to the card's `content_sha256` (what Stage C judged): different bytes are never shown. Two
requests for the same version wait for one fetch.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable

from sqlalchemy import Engine

from stage_e_dagster.db.intake import fetch_state
from stage_e_dagster.db.review.page import ScanPlace
from stage_e_dagster.domain.addresses import redact_url
from stage_e_dagster.domain.remote import FORBIDDEN, Credentials, PaceRules, fetch_key
from stage_e_dagster.remote.address import host_key
from stage_e_dagster.remote.fetch import FetchCache, FetchJob, FetchResult, fetch_one
from stage_e_dagster.remote.limiter import FleetLimiter
from stage_e_dagster.remote.stores import S3Source, SourceConfigError, open_source
from stage_e_dagster.review_web.files import ScanRefused
from stage_e_dagster.stages.stage_c_fetch import FetchSettings

MAX_SHOWN_BYTES = 64 * 1024 * 1024
"""The review page serves no scan larger than this (`review_web.files.MAX_SCAN_BYTES`)."""


class RemoteScans:
    """Reads remote scans for the review page (see the module docstring); one per served app, thread-safe."""

    def __init__(self, engine: Engine, settings: FetchSettings,
                 credentials_for: Callable[[str | None], Credentials | None],
                 limiter: FleetLimiter | None = None) -> None:
        self.engine, self.settings, self.credentials_for = engine, settings, credentials_for
        self.cache = FetchCache(settings.cache_dir)
        self.limiter = limiter or FleetLimiter(engine, settings.rate, PaceRules(recover_after=settings.recover_after),
                                               settings.fallback_share, jitter_seconds=settings.jitter_seconds)
        self._guard = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}

    def _lock(self, key: str) -> threading.Lock:
        with self._guard:
            if len(self._locks) > 256:
                self._locks = {k: v for k, v in self._locks.items() if v.locked()}
            return self._locks.setdefault(key, threading.Lock())

    def read(self, place: ScanPlace) -> bytes:
        """The scan's bytes, from the cache or one fetch; `ScanRefused` (saying why, never with a secret) when they
        cannot be had."""
        key = fetch_key(place.source_id, place.ref, place.remote_token or "")
        with self._lock(key):
            result = self._fetch(place, key)
            if result.kind != "fetched" or result.path is None:
                raise ScanRefused(f"fetch {result.reason or result.kind} ({result.status or 'no status'}) "
                                        f"{result.detail[:120]}")
            try:
                return result.path.read_bytes()
            except OSError as err:  # Stage C released the file meanwhile
                raise ScanRefused(f"cache file gone: {type(err).__name__}") from None

    def _fetch(self, place: ScanPlace, key: str) -> FetchResult:
        try:
            client = open_source(place.kind, place.location, endpoint=place.endpoint, region=place.region,
                                 credentials=place.credentials, timeout_seconds=self.settings.timeout_seconds,
                                 credentials_for=self.credentials_for, allow_private=place.allow_private)
        except SourceConfigError as err:
            raise ScanRefused(f"source cannot be opened: {err}") from None
        first_host = client.host if isinstance(client, S3Source) else host_key(place.ref)
        if first_host is not None:
            with self.engine.connect() as conn:
                if fetch_state.host_locked(conn, first_host):
                    raise ScanRefused(f"host {first_host} locked us out; its trip is open")
        job = FetchJob(0, place.source_id, place.ref, key, place.content_sha256, None)
        result = fetch_one(job, client, self.cache, self.limiter,
                           max_bytes=min(MAX_SHOWN_BYTES, self.settings.max_bytes),
                           timeout_seconds=self.settings.timeout_seconds)
        if not result.cached:
            self._record(place, key, result)
        return result

    def _record(self, place: ScanPlace, key: str, result: FetchResult) -> None:
        """Count the outcome as Stage C counts a fetch's, without judging the card."""
        host = result.host or f"source:{place.source_id}"
        with self.engine.begin() as conn:
            if result.kind in ("fetched", "gone"):
                fetch_state.source_answered(conn, place.source_id, host)
            elif result.kind == FORBIDDEN:
                detail = {"status": result.status, "detail": result.detail, "ref": redact_url(place.ref)[:300],
                          "host": host, "by": "review page"}
                fetch_state.record_forbidden(conn, place.source_id, None, place.remote_token or "", key,
                                             self.settings.lockout_forbidden, f"review-{uuid.uuid4()}", detail, host)
