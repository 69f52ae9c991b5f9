"""Talking to remote stores: list an S3-compatible prefix page by page, read an HTTP manifest, and open an object's
bytes as a stream. Every failure is a `StoreError` of one kind (`domain.remote`), never a library's own exception.

S3 goes through `obstore` (one well-kept client: request signing, endpoints, regions); a listing page it refuses
for one key it cannot parse is read raw instead (`remote.s3_listing`), that key named as refused. Plain HTTP(S)
objects and manifests go through `remote.http_source` (urllib3, each request checked against the source's address
rule and held to one deadline). Neither client retries by itself: every request a fetch makes is one the
fleet-wide limiter granted (`remote.limiter`), so the store sees no request the limiter did not count. A redirect is
followed by hand, each hop with a grant of its own.

Secrets: the credential set is passed in (from `settings.s3_credentials`) and goes to the client only; an error's
text keeps its first line and never a header, and a URL in it is redacted (`domain.addresses.redact_url`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import obstore
import urllib3
from obstore.exceptions import (
    BaseError,
    InvalidPathError,
    NotFoundError,
    PermissionDeniedError,
    UnauthenticatedError,
)
from obstore.store import S3Store

from stage_e_dagster.domain.addresses import has_userinfo, origin, shown_location
from stage_e_dagster.domain.remote import (
    BROKEN,
    Credentials,
    Listed,
    LocationError,
    RemoteLocation,
    is_loopback,
    object_token,
    parse_location,
)
from stage_e_dagster.remote.common import CHUNK_BYTES, Acquire, Body, StoreError, http_error
from stage_e_dagster.remote.http_source import MANIFEST_SECONDS, MAX_MANIFEST_BYTES, MAX_MANIFEST_ENTRIES, HttpSource
from stage_e_dagster.remote.s3_listing import RawLister

__all__ = ["Acquire", "Body", "HttpSource", "S3Source", "SourceConfigError", "StoreError", "client_for", "http_error",
           "open_source"]

_STATUS = re.compile(r"status(?: code)?:? (\d{3})")


def _store_error(err: Exception, host: str | None = None) -> StoreError:
    text = (str(err).strip().splitlines() or [type(err).__name__])[0]
    if isinstance(err, NotFoundError):
        return http_error(404, text, host)
    if isinstance(err, PermissionDeniedError):
        return http_error(403, text, host)
    if isinstance(err, UnauthenticatedError):
        return http_error(401, text, host)
    found = _STATUS.search(str(err))
    if found:
        return http_error(int(found.group(1)), text, host)
    lowered = str(err).lower()
    if "timed out" in lowered or "timeout" in lowered:
        return StoreError(BROKEN, "fetch-timeout", None, text, host)
    if "body" in lowered:
        return StoreError(BROKEN, "fetch-truncated", None, text, host)
    return StoreError(BROKEN, "fetch-error", None, text, host)


def _refused_page(err: Exception) -> bool:
    """Whether obstore refused a listing (or its offset) for a key it cannot parse as a path."""
    return isinstance(err, InvalidPathError) or (isinstance(err, ValueError) and "parse path" in str(err).lower())


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
        found = origin(endpoint) if endpoint else None
        place = f"{found[1]}:{found[2]}" if found else f"s3.{region or 'us-east-1'}.amazonaws.com"
        self.host = f"s3://{location.bucket}@{place}"
        """The `fetch_host` key of this bucket: a lockout is judged per bucket and endpoint."""
        self.raw = RawLister(location.bucket, location.prefix, endpoint, region or "us-east-1", credentials,
                             timeout_seconds)
        client = {"allow_http": bool(endpoint and endpoint.startswith("http://") and is_loopback(host)),
                  "timeout": timedelta(seconds=timeout_seconds),
                  "connect_timeout": timedelta(seconds=min(10.0, timeout_seconds))}
        retry = {"max_retries": 0, "retry_timeout": timedelta(seconds=timeout_seconds)}
        self.store = S3Store(location.bucket, prefix=location.prefix or None, config=config, client_options=client,
                             retry_config=retry)

    def pages(self, after: str | None, page_size: int = 1000) -> Iterator[list[Listed]]:
        """The objects after key `after` (all when None), in key order, one page at a time: a page is one request
        to the store, and nothing beyond the page is held. A page obstore refuses (a key it cannot parse) is read
        raw, its unusable keys listed as refused (`Listed.refused`), and the listing goes on after it."""
        cursor = after or None
        while True:
            try:
                for batch in obstore.list(self.store, offset=cursor, chunk_size=page_size):
                    page = [Listed(m["path"], object_token(m.get("e_tag"), m.get("size"), m.get("last_modified")),
                                   m.get("size")) for m in batch]
                    if page:
                        cursor = max((item.identifier for item in page),
                                     key=lambda key: key.encode("utf-8", "surrogateescape"))
                    yield page
                return
            except Exception as err:  # noqa: BLE001 - obstore raises its own classes and OSError subclasses
                if not _refused_page(err):
                    raise _store_error(err) from None
            raw = self.raw.page(cursor, page_size)
            if raw.listed:
                cursor = raw.listed[-1].identifier
            yield raw.listed
            if not raw.truncated or not raw.listed:
                return

    def open(self, identifier: str, acquire: Acquire) -> Body:
        acquire()
        try:
            result = obstore.get(self.store, identifier)
        except Exception as err:  # noqa: BLE001
            raise _store_error(err, self.host) from None

        def chunks() -> Iterator[bytes]:
            try:
                for chunk in result.stream(min_chunk_size=CHUNK_BYTES):
                    yield bytes(chunk)
            except Exception as err:  # noqa: BLE001
                raise _store_error(err, self.host) from None

        return Body(chunks(), result.meta.get("size"), host=self.host)


class SourceConfigError(ValueError):
    """A remote source this process cannot open: its location is malformed or its credential set is missing."""


def open_source(kind: str, location: str, *, endpoint: str | None, region: str | None, credentials: str | None,
                timeout_seconds: float, credentials_for: Callable[[str | None], Credentials | None],
                allow_private: bool = False, manifest_seconds: float = MANIFEST_SECONDS,
                max_manifest_bytes: int = MAX_MANIFEST_BYTES, max_manifest_entries: int = MAX_MANIFEST_ENTRIES
                ) -> S3Source | HttpSource:
    """The store client of a remote source row (its credential set looked up by name through `credentials_for`;
    `allow_private` and the manifest's limits for a manifest)."""
    try:
        where = parse_location(location)
        if where.kind != kind:
            raise LocationError(f"{shown_location(location)!r} is not a {kind} location")
        if endpoint and has_userinfo(endpoint):
            raise LocationError("the endpoint URL holds credentials; name a credential set instead")
        if where.kind == "http":
            return HttpSource(where, timeout_seconds=timeout_seconds, allow_private=allow_private,
                              manifest_seconds=manifest_seconds, max_manifest_bytes=max_manifest_bytes,
                              max_manifest_entries=max_manifest_entries)
        return S3Source(where, endpoint=endpoint, region=region, credentials=credentials_for(credentials),
                        timeout_seconds=timeout_seconds)
    except (ValueError, BaseError) as err:  # LocationError, SettingsError (no credential set), bad endpoint
        raise SourceConfigError(str(err)) from None


LIST_TIMEOUT_SECONDS = 30.0
"""A listing request (one S3 page, the manifest's first bytes) that takes longer has failed."""


def client_for(row: Any, timeout_seconds: float = LIST_TIMEOUT_SECONDS) -> S3Source | HttpSource:
    """The store client of a `source` row (`db.intake.sources.SourceRow`) for listing it: its credential set read
    from the environment (`settings.s3_credentials`), a manifest's limits from the settings."""
    from stage_e_dagster.settings import Settings, s3_credentials

    conf = Settings.from_env()
    return open_source(row.kind, row.location, endpoint=row.endpoint, region=row.region,
                       credentials=row.credentials, timeout_seconds=timeout_seconds, credentials_for=s3_credentials,
                       allow_private=row.allow_private, manifest_seconds=conf.manifest_read_seconds,
                       max_manifest_bytes=conf.manifest_max_bytes, max_manifest_entries=conf.manifest_max_entries)
