"""An HTTP(S) manifest source on the wire: the manifest, read as a stream, and its images.

Every request goes through `remote.address`: its URL is checked against the source's address rule (an image or a
redirect hop off the manifest's origin must be public, unless the source allows private hosts), the connection goes
to the address that was checked, and one `Watchdog` deadline covers all of a request (connect, TLS, headers, every
redirect hop, the body). A fetch has `timeout_seconds` from its first request; a manifest read has
`manifest_seconds`, or less when its caller's budget says so.

Bodies are asked for as they are (`Accept-Encoding: identity`) and read with `decode_content=False`: a body is
judged by its real bytes (its length against `Content-Length`, its hash), and nothing is ever decompressed here.
`Content-Length` is read strictly (ASCII digits; anything else is a broken fetch). A manifest stops at
`max_manifest_bytes` bytes or `max_manifest_entries` entries, and leading whitespace is skipped, never gathered.

Each connection serves one request and is closed after it: no connection outlives its deadline or is shared with a
request checked against another address.
"""

from __future__ import annotations

import http.client
import time
from collections.abc import Iterator
from contextlib import suppress
from urllib.parse import urljoin, urlsplit

import ijson
import urllib3
from urllib3.connection import HTTPConnection, HTTPSConnection

from stage_e_dagster.domain.addresses import redact_url
from stage_e_dagster.domain.numbers import parse_count
from stage_e_dagster.domain.remote import BROKEN, LocationError, ManifestEntry, RemoteLocation, check_http_url
from stage_e_dagster.domain.remote import parse_entry as parse_manifest_entry
from stage_e_dagster.remote.address import Gate, Target, Watchdog
from stage_e_dagster.remote.common import CHUNK_BYTES, Acquire, Body, StoreError, http_error, timed_out

MAX_REDIRECTS = 3
MANIFEST_SECONDS = 120.0
MAX_MANIFEST_BYTES = 128 * 1024 * 1024
MAX_MANIFEST_ENTRIES = 500_000
_REDIRECTS = (301, 302, 303, 307, 308)


class _Exchange:
    """One request on its own connection to a checked address, under a watchdog; its response is read raw."""

    def __init__(self, target: Target, url: str, headers: dict[str, str], watchdog: Watchdog,
                 connect_seconds: float) -> None:
        parts = urlsplit(url)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        left = max(0.01, watchdog.left())
        connect = min(connect_seconds, left)
        if target.scheme == "https":
            self.conn: HTTPConnection = HTTPSConnection(target.address, target.port, timeout=connect,
                                                        server_hostname=target.host)
        else:
            self.conn = HTTPConnection(target.address, target.port, timeout=connect)
        self.watchdog, self.target = watchdog, target
        watchdog.watch(self.conn)
        try:
            self.conn.connect()
            watchdog.watch(self.conn.sock)
            self.conn.sock.settimeout(max(0.01, watchdog.left()))
            self.conn.request("GET", path, headers={"Host": target.host_header, "Accept-Encoding": "identity",
                                                    **headers},
                              preload_content=False, decode_content=False, enforce_content_length=True)
            self.response = self.conn.getresponse()
        except (urllib3.exceptions.HTTPError, http.client.HTTPException, OSError) as err:
            self.close()
            raise self.failure(err, None, "fetch-error") from None

    def failure(self, err: BaseException, status: int | None, reason: str) -> StoreError:
        if self.watchdog.fired:
            return timed_out(f"not complete within the deadline ({type(err).__name__})", self.target.key, status)
        if isinstance(err, urllib3.exceptions.TimeoutError | TimeoutError):
            return timed_out(type(err).__name__, self.target.key, status)
        return StoreError(BROKEN, reason, status, f"{type(err).__name__}: {str(err)[:160]}", self.target.key)

    def read(self, size: int) -> bytes:
        try:
            chunk = self.response.read1(size, decode_content=False)
        except (urllib3.exceptions.HTTPError, http.client.HTTPException, OSError) as err:
            raise self.failure(err, 200, "fetch-truncated") from None
        if not chunk and self.watchdog.fired:
            raise timed_out("not complete within the deadline", self.target.key, 200)
        return chunk

    def close(self) -> None:
        """Close the response and its connection (never reused: each serves one request)."""
        response = getattr(self, "response", None)
        with suppress(OSError, urllib3.exceptions.HTTPError):
            if response is not None:
                response.close()
            self.conn.close()


class HttpSource:
    """A JSON manifest of image URLs, and the images behind it."""

    def __init__(self, location: RemoteLocation, *, timeout_seconds: float, allow_private: bool = False,
                 manifest_seconds: float = MANIFEST_SECONDS, max_manifest_bytes: int = MAX_MANIFEST_BYTES,
                 max_manifest_entries: int = MAX_MANIFEST_ENTRIES) -> None:
        self.url = location.url
        self.timeout_seconds = timeout_seconds
        self.connect_seconds = min(10.0, timeout_seconds)
        self.gate = Gate(location.url, allow_private)
        self.manifest_seconds = manifest_seconds
        self.max_manifest_bytes, self.max_manifest_entries = max_manifest_bytes, max_manifest_entries

    def _exchange(self, url: str, watchdog: Watchdog, headers: dict[str, str] | None = None) -> _Exchange:
        return _Exchange(self.gate.target(url, watchdog.deadline), url, headers or {}, watchdog,
                         self.connect_seconds)

    def manifest(self, validator: str | None, deadline: float | None = None
                 ) -> tuple[str | None, Iterator[ManifestEntry | tuple[int, str]]] | None:
        """The manifest's entries (or `(index, why)` for a refused one) and its new validator; None when it is
        unchanged since `validator` (a 304: nothing downloaded). The entries are parsed as they stream in, until
        `deadline` (monotonic seconds; default `manifest_seconds` from now)."""
        headers = {}
        if validator and validator.startswith("etag:"):
            headers["If-None-Match"] = validator[5:]
        elif validator and validator.startswith("lm:"):
            headers["If-Modified-Since"] = validator[3:]
        watchdog = Watchdog(time.monotonic() + self.manifest_seconds if deadline is None else deadline)
        try:
            exchange = self._exchange(self.url, watchdog, headers)
        except StoreError:
            watchdog.cancel()
            raise
        response = exchange.response
        if response.status != 200:
            exchange.close()
            watchdog.cancel()
            if response.status == 304:
                return None
            raise http_error(response.status, f"manifest {redact_url(self.url)}", exchange.target.key)
        etag, modified = response.headers.get("ETag"), response.headers.get("Last-Modified")
        new = f"etag:{etag}" if etag else (f"lm:{modified}" if modified else None)
        return new, self._entries(exchange, watchdog)

    def _entries(self, exchange: _Exchange, watchdog: Watchdog) -> Iterator[ManifestEntry | tuple[int, str]]:
        try:
            reader = _ManifestBody(exchange, self.max_manifest_bytes)
            prefix = "item" if reader.first == b"[" else "images.item"
            for index, raw in enumerate(ijson.items(reader, prefix, use_float=True)):
                if index >= self.max_manifest_entries:
                    raise StoreError(BROKEN, "fetch-too-large", 200,
                                     f"manifest holds more than {self.max_manifest_entries} entries")
                parsed = parse_manifest_entry(raw, self.url, self.gate.allow_private)  # never raises
                yield parsed if isinstance(parsed, ManifestEntry) else (index, parsed)
        except ijson.JSONError as err:
            what = ("holds a number beyond 64 bits, which the streaming parser cannot read" if "integer overflow" in
                    str(err) else f"is not JSON: {str(err)[:160]}")
            raise StoreError(BROKEN, "fetch-corrupt", 200, f"manifest {what}") from None
        except (UnicodeError, ValueError) as err:
            raise StoreError(BROKEN, "fetch-corrupt", 200, f"manifest cannot be read: {type(err).__name__}"
                             ) from None
        finally:
            watchdog.cancel()
            exchange.close()

    def open(self, url: str, acquire: Acquire) -> Body:
        """The object at `url` as a stream of its raw bytes; each request (redirect hops too) is checked against
        the address rule, then waits for its turn (`acquire`)."""
        watchdog: Watchdog | None = None
        try:
            for _hop in range(MAX_REDIRECTS + 1):
                if watchdog is None:
                    target = self.gate.target(url, time.monotonic() + self.timeout_seconds)
                    acquire()
                    watchdog = Watchdog(time.monotonic() + self.timeout_seconds)
                else:
                    target = self.gate.target(url, watchdog.deadline)
                    acquire()
                exchange = _Exchange(target, url, {}, watchdog, self.connect_seconds)
                status = exchange.response.status
                location = exchange.response.headers.get("Location")
                if status in _REDIRECTS and location:
                    exchange.close()
                    url = _redirect(url, location, target.key)
                    continue
                if status != 200:
                    exchange.close()
                    raise http_error(status, redact_url(url), target.key)
                return self._body(exchange, watchdog)
            raise StoreError(BROKEN, "fetch-error", None, f"more than {MAX_REDIRECTS} redirects")
        except BaseException:
            if watchdog is not None:
                watchdog.cancel()
            raise

    @staticmethod
    def _body(exchange: _Exchange, watchdog: Watchdog) -> Body:
        header = exchange.response.headers.get("Content-Length")
        length = parse_count(header.strip()) if header is not None else None
        if header is not None and length is None:
            exchange.close()
            raise StoreError(BROKEN, "fetch-error", 200, f"Content-Length {header[:40]!r} is not a number",
                             exchange.target.key)

        def chunks() -> Iterator[bytes]:
            while chunk := exchange.read(CHUNK_BYTES):
                yield chunk

        def close() -> None:
            watchdog.cancel()
            exchange.close()

        return Body(chunks(), length, close, exchange.target.key)


class _ManifestBody:
    """A manifest's body for the parser: leading whitespace skipped (never gathered), the first byte known before
    parsing starts (`first`), and no more than `max_bytes` read."""

    def __init__(self, exchange: _Exchange, max_bytes: int) -> None:
        self.exchange, self.max_bytes, self.seen = exchange, max_bytes, 0
        self.head = b""
        while chunk := self._raw(CHUNK_BYTES):
            self.head = chunk.lstrip()
            if self.head:
                break
        self.first = self.head[:1]

    def _raw(self, size: int) -> bytes:
        chunk = self.exchange.read(size)
        self.seen += len(chunk)
        if self.seen > self.max_bytes:
            raise StoreError(BROKEN, "fetch-too-large", 200, f"manifest larger than {self.max_bytes} bytes",
                             self.exchange.target.key)
        return chunk

    def read(self, size: int = -1) -> bytes:
        if size == 0:
            return b""
        if self.head:
            out, self.head = self.head, b""
            return out
        return self._raw(size if size and size > 0 else CHUNK_BYTES)


def _redirect(base: str, location: str, host: str) -> str:
    """Where a redirect leads; it may not leave https for plain http beyond loopback (its address is checked when
    its request is made)."""
    try:
        target = urljoin(base, location)
        check_http_url(target, what="redirect")
    except (LocationError, ValueError) as err:
        raise StoreError(BROKEN, "fetch-error", None, str(err) if isinstance(err, LocationError) else
                         "redirect to a URL that cannot be parsed", host) from None
    return target
