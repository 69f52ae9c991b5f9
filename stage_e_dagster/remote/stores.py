"""Talking to remote stores: list an S3-compatible prefix page by page, read an HTTP manifest, and open an object's
bytes as a stream. Every failure is a `StoreError` of one kind (`domain.remote`), never a library's own exception.

S3 goes through `obstore` (one well-kept client: request signing, endpoints, regions). Plain HTTP(S) objects and
manifests go through `urllib3`, which says exactly which status came back and streams the body. Neither client
retries by itself: every request a fetch makes is one the fleet-wide limiter granted (`remote.limiter`), so the
store sees no request the limiter did not count. A redirect is followed by hand, each hop with a grant of its own.

Secrets: the credential set is passed in (from `settings.s3_credentials`) and goes to the client only; an error's
text keeps its first line and never a header.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from urllib.parse import urljoin

import ijson
import obstore
import urllib3
from obstore.exceptions import BaseError, NotFoundError, PermissionDeniedError, UnauthenticatedError
from obstore.store import S3Store

from stage_e_dagster.domain.remote import (
    BROKEN,
    FORBIDDEN,
    GONE,
    Credentials,
    LocationError,
    ManifestEntry,
    RemoteLocation,
    check_http_url,
    classify_status,
    is_loopback,
    object_token,
    parse_entry,
)

CHUNK_BYTES = 64 * 1024
MAX_REDIRECTS = 3
_STATUS = re.compile(r"status(?: code)?:? (\d{3})")


class StoreError(Exception):
    """A request that did not give the bytes: its kind (`domain.remote`), the skip reason it would name, the HTTP
    status if one came back, and a short detail."""

    def __init__(self, kind: str, reason: str, status: int | None = None, detail: str = "") -> None:
        super().__init__(f"{reason} ({status or 'no status'}): {detail}")
        self.kind, self.reason, self.status, self.detail = kind, reason, status, detail[:300]


def http_error(status: int, detail: str = "") -> StoreError:
    kind = classify_status(status)
    reason = {FORBIDDEN: "fetch-forbidden", GONE: "fetch-gone", BROKEN: "fetch-error"}.get(kind, "fetch-throttled")
    return StoreError(kind, reason, status, detail)


@dataclass(frozen=True)
class Listed:
    """One object a listing shows: its identifier in the source, change token, size, and (manifests) its URL and
    declared hash."""

    identifier: str
    token: str
    size: int | None = None
    url: str | None = None
    sha256: str | None = None


@dataclass
class Body:
    """An open object: its declared size (if the store said) and its bytes as chunks."""

    chunks: Iterator[bytes]
    size: int | None
    close: Callable[[], None] = lambda: None


Acquire = Callable[[], None]
"""Waits for the limiter's grant; called right before each request of a fetch."""


def _store_error(err: Exception) -> StoreError:
    text = (str(err).strip().splitlines() or [type(err).__name__])[0]
    if isinstance(err, NotFoundError):
        return http_error(404, text)
    if isinstance(err, PermissionDeniedError):
        return http_error(403, text)
    if isinstance(err, UnauthenticatedError):
        return http_error(401, text)
    found = _STATUS.search(str(err))
    if found:
        return http_error(int(found.group(1)), text)
    lowered = str(err).lower()
    if "timed out" in lowered or "timeout" in lowered:
        return StoreError(BROKEN, "fetch-timeout", None, text)
    if "body" in lowered:
        return StoreError(BROKEN, "fetch-truncated", None, text)
    return StoreError(BROKEN, "fetch-error", None, text)


class S3Source:
    """An S3-compatible bucket and prefix; identifiers are keys relative to the prefix."""

    def __init__(self, location: RemoteLocation, *, endpoint: str | None, region: str | None,
                 credentials: Credentials | None, timeout_seconds: float) -> None:
        config: dict[str, Any] = {"region": region or "us-east-1"}
        if endpoint:
            config["endpoint"] = endpoint
            config["virtual_hosted_style_request"] = False
        if credentials is None:
            config["skip_signature"] = True
        else:
            config["access_key_id"] = credentials.access_key_id
            config["secret_access_key"] = credentials.secret_access_key
            if credentials.session_token:
                config["session_token"] = credentials.session_token
        host = urllib3.util.parse_url(endpoint).host if endpoint else None
        client = {"allow_http": bool(endpoint and endpoint.startswith("http://") and is_loopback(host)),
                  "timeout": timedelta(seconds=timeout_seconds),
                  "connect_timeout": timedelta(seconds=min(10.0, timeout_seconds))}
        retry = {"max_retries": 0, "retry_timeout": timedelta(seconds=timeout_seconds)}
        self.store = S3Store(location.bucket, prefix=location.prefix or None, config=config, client_options=client,
                             retry_config=retry)

    def pages(self, after: str | None, page_size: int = 1000) -> Iterator[list[Listed]]:
        """The objects after key `after` (all when None), in key order, one page at a time: a page is one request
        to the store, and nothing beyond the page is held."""
        try:
            stream = obstore.list(self.store, offset=after or None, chunk_size=page_size)
            for batch in stream:
                yield [Listed(m["path"], object_token(m.get("e_tag"), m.get("size"), m.get("last_modified")),
                              m.get("size")) for m in batch]
        except Exception as err:  # noqa: BLE001 - obstore raises its own classes and OSError subclasses
            raise _store_error(err) from None

    def open(self, identifier: str, acquire: Acquire) -> Body:
        acquire()
        try:
            result = obstore.get(self.store, identifier)
        except Exception as err:  # noqa: BLE001
            raise _store_error(err) from None

        def chunks() -> Iterator[bytes]:
            try:
                for chunk in result.stream(min_chunk_size=CHUNK_BYTES):
                    yield bytes(chunk)
            except Exception as err:  # noqa: BLE001
                raise _store_error(err) from None

        return Body(chunks(), result.meta.get("size"))


class HttpSource:
    """A JSON manifest of image URLs, and the images behind it."""

    def __init__(self, location: RemoteLocation, *, timeout_seconds: float, pool: urllib3.PoolManager | None = None
                 ) -> None:
        self.url = location.url
        self.timeout = urllib3.Timeout(connect=min(10.0, timeout_seconds), read=timeout_seconds)
        self.pool = pool or urllib3.PoolManager(num_pools=16, maxsize=8, retries=False)

    def _get(self, url: str, headers: dict[str, str] | None = None) -> urllib3.BaseHTTPResponse:
        try:
            return self.pool.request("GET", url, headers=headers, preload_content=False, redirect=False,
                                     retries=False, timeout=self.timeout)
        except urllib3.exceptions.TimeoutError as err:
            raise StoreError(BROKEN, "fetch-timeout", None, type(err).__name__) from None
        except urllib3.exceptions.HTTPError as err:
            raise StoreError(BROKEN, "fetch-error", None, f"{type(err).__name__}: {str(err)[:200]}") from None

    def manifest(self, validator: str | None) -> tuple[str | None, Iterator[ManifestEntry | tuple[int, str]]] | None:
        """The manifest's entries (or `(index, why)` for a refused one) and its new validator; None when it is
        unchanged since `validator` (a 304: nothing downloaded). The entries are parsed as they stream in."""
        headers = {}
        if validator and validator.startswith("etag:"):
            headers["If-None-Match"] = validator[5:]
        elif validator and validator.startswith("lm:"):
            headers["If-Modified-Since"] = validator[3:]
        response = self._get(self.url, headers)
        if response.status == 304:
            _discard(response)
            return None
        if response.status != 200:
            _discard(response)
            raise http_error(response.status, f"manifest {self.url}")
        etag, modified = response.headers.get("ETag"), response.headers.get("Last-Modified")
        new = f"etag:{etag}" if etag else (f"lm:{modified}" if modified else None)
        return new, self._entries(response)

    def _entries(self, response: urllib3.BaseHTTPResponse) -> Iterator[ManifestEntry | tuple[int, str]]:
        try:
            reader = _Peeked(response)
            prefix = "item" if reader.first == b"[" else "images.item"
            for index, raw in enumerate(ijson.items(reader, prefix, use_float=True)):
                parsed = parse_entry(raw, self.url)
                yield parsed if isinstance(parsed, ManifestEntry) else (index, parsed)
        except ijson.JSONError as err:
            raise StoreError(BROKEN, "fetch-corrupt", 200, f"manifest is not JSON: {err}") from None
        except urllib3.exceptions.HTTPError as err:
            raise StoreError(BROKEN, "fetch-truncated", 200, f"manifest: {type(err).__name__}") from None
        finally:
            response.release_conn()

    def open(self, url: str, acquire: Acquire) -> Body:
        for _hop in range(MAX_REDIRECTS + 1):
            acquire()
            response = self._get(url)
            if response.status in (301, 302, 303, 307, 308) and response.headers.get("Location"):
                _discard(response)
                url = _redirect(url, response.headers["Location"])
                continue
            if response.status != 200:
                _discard(response)
                raise http_error(response.status, url)
            length = response.headers.get("Content-Length")
            return Body(self._chunks(response), int(length) if length and length.isdigit() else None,
                        lambda response=response: _finish(response))
        raise StoreError(BROKEN, "fetch-error", None, f"more than {MAX_REDIRECTS} redirects")

    @staticmethod
    def _chunks(response: urllib3.BaseHTTPResponse) -> Iterator[bytes]:
        try:
            # read1: whatever one receive brings (at most a chunk), so the caller's deadline is checked as bytes
            # trickle in, not only once a whole chunk arrived.
            while chunk := response.read1(CHUNK_BYTES, decode_content=True):
                yield chunk
        except urllib3.exceptions.ReadTimeoutError:
            raise StoreError(BROKEN, "fetch-timeout", 200, "read timed out") from None
        except (urllib3.exceptions.ProtocolError, urllib3.exceptions.IncompleteRead) as err:
            raise StoreError(BROKEN, "fetch-truncated", 200, type(err).__name__) from None
        except urllib3.exceptions.HTTPError as err:
            raise StoreError(BROKEN, "fetch-error", 200, type(err).__name__) from None


def _finish(response: urllib3.BaseHTTPResponse) -> None:
    """Give a body's connection back to the pool when every byte was read; close it when the read stopped early (a
    size limit, a deadline), so no half-read body is left on a connection the next request would use."""
    if not response.closed:
        response.close()
    response.release_conn()


def _discard(response: urllib3.BaseHTTPResponse) -> None:
    """Read and drop a small error body so its connection can serve the next request (or close it)."""
    try:
        response.drain_conn()
    except urllib3.exceptions.HTTPError:
        pass
    response.release_conn()


class _Peeked:
    """A response body to read from, whose first non-blank byte is known before parsing starts (`first`)."""

    def __init__(self, response: urllib3.BaseHTTPResponse) -> None:
        self.response = response
        self.head = b""
        while not self.head.strip() and (chunk := response.read(CHUNK_BYTES)):
            self.head += chunk
        self.first = self.head.lstrip()[:1]

    def read(self, size: int = -1) -> bytes:
        if size == 0:
            return b""
        if self.head:
            out, self.head = self.head, b""
            return out
        return self.response.read(size if size and size > 0 else CHUNK_BYTES)


def _redirect(base: str, location: str) -> str:
    """Where a redirect leads; it may not leave https for plain http beyond loopback."""
    target = urljoin(base, location)
    try:
        check_http_url(target, what="redirect")
    except LocationError as err:
        raise StoreError(BROKEN, "fetch-error", None, str(err)) from None
    return target


class SourceConfigError(ValueError):
    """A remote source this process cannot open: its location is malformed or its credential set is missing."""


def open_source(kind: str, location: str, *, endpoint: str | None, region: str | None, credentials: str | None,
                timeout_seconds: float, credentials_for: Callable[[str | None], Credentials | None]
                ) -> S3Source | HttpSource:
    """The store client of a remote source row (its credential set looked up by name through `credentials_for`)."""
    from stage_e_dagster.domain.remote import parse_location

    try:
        where = parse_location(location)
        if where.kind != kind:
            raise LocationError(f"{location!r} is not a {kind} location")
        if where.kind == "http":
            return HttpSource(where, timeout_seconds=timeout_seconds)
        return S3Source(where, endpoint=endpoint, region=region, credentials=credentials_for(credentials),
                        timeout_seconds=timeout_seconds)
    except (ValueError, BaseError) as err:  # LocationError, SettingsError (no credential set), bad endpoint
        raise SourceConfigError(str(err)) from None


LIST_TIMEOUT_SECONDS = 30.0
"""A listing request (one S3 page, the manifest's first bytes) that takes longer has failed."""


def client_for(row: Any, timeout_seconds: float = LIST_TIMEOUT_SECONDS) -> S3Source | HttpSource:
    """The store client of a `source` row (`db.intake.sources.SourceRow`), its credential set read from the
    environment (`settings.s3_credentials`)."""
    from stage_e_dagster.settings import s3_credentials

    return open_source(row.kind, row.location, endpoint=row.endpoint, region=row.region,
                       credentials=row.credentials, timeout_seconds=timeout_seconds, credentials_for=s3_credentials)
