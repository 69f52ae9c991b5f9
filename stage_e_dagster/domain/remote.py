"""Remote sources in pure terms: where a source is, what its listing says about each object, how a fetch ended, and
the shared pace's arithmetic. No network, no SQL.

A remote source is an S3-compatible bucket and prefix (`s3://bucket/prefix`) or an HTTP(S) JSON manifest listing
image URLs. Plain `http://` is accepted on loopback only (tests and local stores): anywhere else a scan or a
credential would cross the network in the clear.

A listed object is known by its *change token*: for S3 the ETag, size and last-modified time the listing gives; for a
manifest entry its URL and declared content hash. A new token means new bytes, so nothing is downloaded to learn
that nothing changed. A manifest's declared sha256 serves as a card's provisional identity (it is a true content
hash); an S3 ETag does not (it is an MD5 only for some uploads, and never a sha256).

A fetch ends in one of six kinds, each with its own action (`docs/design.md`, "Remote sources"): `fetched`,
`throttled` (429, 503, a provider's slow-down: deferred, never failed), `forbidden` (403, 401: a named skip, or a
lockout when several come in a row from a host that answered before), `gone` (404: a named skip; the next sync
marks the card missing), `refused` (an address the source may not reach, `domain.addresses`: a named skip, no
request sent) and `broken` (truncated, corrupt, too large, timed out, any other error: a named skip that is retried
a bounded number of times).

Each manifest entry is judged on its own (`parse_entry`): whatever one line holds (a NUL, a URL that does not
parse), it is refused by name and the rest of the manifest is read (a size no column can hold is dropped).
"""

from __future__ import annotations

import hashlib
import ipaddress
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import quote, unquote, urljoin, urlsplit

from stage_e_dagster.domain.addresses import literal_refusal, redact_url
from stage_e_dagster.domain.filenames import is_image_name
from stage_e_dagster.domain.numbers import MAX_BIGINT

KINDS = ("directory", "s3", "http")
REMOTE_KINDS = ("s3", "http")

THROTTLED, FORBIDDEN, GONE, BROKEN, REFUSED = "throttled", "forbidden", "gone", "broken", "refused"
FETCH_KINDS = ("fetched", THROTTLED, FORBIDDEN, GONE, REFUSED, BROKEN)

BROKEN_REASONS = ("fetch-truncated", "fetch-corrupt", "fetch-too-large", "fetch-timeout", "fetch-error")
FETCH_SKIPS = ("fetch-forbidden", "fetch-gone", "fetch-refused", *BROKEN_REASONS)
"""The named skips a fetch can end in (`card.fetch_failed` and Stage C's skip log). None of them is an image-load
failure: a fetch that failed never counts against the envelope's image-failure bar."""

_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_UNSTORABLE = re.compile(r"[\x00-\x1f\x7f]")
MAX_NAME = 1000
MAX_URL = 8000
"""The longest name and URL a manifest entry may give (longer is refused, not cut; a signed URL runs to a few
thousand characters)."""
_PATH_SAFE = "/:@!$&'()*+,;=%~"
_QUERY_SAFE = "/:@!$&'()*+,;=%~?"


def _quoted(url: str) -> str:
    """`url` with what a path or query may not hold as it is (a space, a bracket, a non-ASCII letter) percent-encoded
    once; escapes already there are kept."""
    parts = urlsplit(url)
    return parts._replace(path=quote(parts.path, safe=_PATH_SAFE), query=quote(parts.query, safe=_QUERY_SAFE),
                          fragment="").geturl()


@dataclass(frozen=True)
class Credentials:
    """One named credential set of an S3-compatible store; the secrets are kept out of the repr."""

    access_key_id: str = field(repr=False)
    secret_access_key: str = field(repr=False)
    session_token: str | None = field(default=None, repr=False)


CREDENTIAL_NAME = re.compile(r"^[A-Za-z0-9_]{1,64}$")
"""A credential set's name: it becomes part of environment variable names."""


class LocationError(ValueError):
    """A source location that is not a directory, an `s3://bucket/prefix` or an allowed HTTP(S) manifest URL."""


@dataclass(frozen=True)
class RemoteLocation:
    """Where a remote source is: `kind` 's3' (bucket, prefix without slashes at its ends) or 'http' (the manifest)."""

    kind: str
    url: str
    bucket: str = ""
    prefix: str = ""


def is_remote(location: str) -> bool:
    return location.startswith(("s3://", "http://", "https://"))


def is_loopback(host: str | None) -> bool:
    if not host:
        return False
    if host.lower() == "localhost":
        return True
    try:
        ip = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback


def parse_location(location: str) -> RemoteLocation:
    """The remote location `location` names; LocationError says what is wrong with it."""
    parts = urlsplit(location.strip())
    if parts.scheme == "s3":
        if not parts.netloc or parts.query or parts.fragment:
            raise LocationError(f"{location!r}: expected s3://bucket/prefix")
        prefix = parts.path.strip("/")
        return RemoteLocation("s3", f"s3://{parts.netloc}/{prefix}".rstrip("/"), parts.netloc, prefix)
    if parts.scheme in ("http", "https"):
        check_http_url(location, what="manifest")
        return RemoteLocation("http", location.strip())
    raise LocationError(f"{location!r}: a remote source is s3://bucket/prefix or an http(s):// manifest URL")


def check_http_url(url: str, what: str = "URL") -> None:
    """Refuse anything but https, and plain http on loopback (the message shows the URL redacted)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        raise LocationError(f"{what} {redact_url(url)!r}: not a URL that can be parsed") from None
    if parts.scheme not in ("http", "https") or not host:
        raise LocationError(f"{what} {redact_url(url)!r}: expected an http(s):// URL")
    if parts.scheme == "http" and not is_loopback(host):
        raise LocationError(f"{what} {redact_url(url)!r}: plain http is allowed on loopback only (use https)")


def object_token(etag: str | None, size: int | None, last_modified: datetime | None) -> str:
    """An S3 object's change token from its listing entry."""
    moment = last_modified.isoformat() if last_modified is not None else ""
    return f"s3|{(etag or '').strip(chr(34))}|{size if size is not None else ''}|{moment}"


@dataclass(frozen=True)
class ManifestEntry:
    """One image of a manifest: its identifier in the source (the name, else the URL), URL and declared hash."""

    identifier: str
    url: str
    sha256: str | None = None
    size: int | None = None

    @property
    def token(self) -> str:
        """The change token: the URL and declared hash, a URL holding a secret by its redacted form and a digest
        (a new signature is a new version, and the stored token holds no secret)."""
        shown = redact_url(self.url)
        if shown == self.url:
            return f"http|{self.url}|{self.sha256 or ''}"
        digest = hashlib.blake2b(self.url.encode(), digest_size=8).hexdigest()
        return f"http|{shown}|{self.sha256 or ''}|{digest}"

    @property
    def file_name(self) -> str:
        return file_name_of(self.identifier, self.url)


@dataclass(frozen=True)
class Listed:
    """One object a listing shows: its identifier in the source, change token, size, and (manifests) its URL and
    declared hash; or (`refused`) why a key the store listed cannot be taken in. The wire (`remote/`) makes them,
    the state layer (`db.intake.remote_sync`) stores them."""

    identifier: str
    token: str
    size: int | None = None
    url: str | None = None
    sha256: str | None = None
    refused: str | None = None


def file_name_of(identifier: str, url: str | None) -> str:
    """The name a remote card's name and set hint are parsed from: the identifier a manifest entry named, else (its
    identifier is its URL) the URL's last segment."""
    if url is None or identifier not in (url, redact_url(url)):
        return identifier
    return unquote(urlsplit(url).path.rsplit("/", 1)[-1])


def _without_userinfo(url: str) -> str:
    """`url` with any `user:password@` dropped: it is never sent, and it must not be stored."""
    parts = urlsplit(url)
    return parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl() if "@" in parts.netloc else url


def storable(text: str, longest: int = MAX_NAME) -> bool:
    """Whether `text` can be stored and shown as it is: no control character (a NUL in particular), valid UTF-8
    (no lone surrogate from a JSON escape), at most `longest` characters."""
    if len(text) > longest or _UNSTORABLE.search(text):
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def parse_entry(raw: Any, manifest_url: str, allow_private: bool = False) -> ManifestEntry | str:
    """A manifest entry (a URL string, or an object with `url` and optional `name`, `sha256` and `size`), resolved
    against the manifest's URL; or why it is refused. Never raises, whatever the entry holds."""
    try:
        return _entry(raw, manifest_url, allow_private)
    except (ValueError, TypeError) as err:  # urlsplit's "Invalid IPv6 URL", a bad escape, ...
        return f"entry cannot be read: {type(err).__name__}"


def _entry(raw: Any, manifest_url: str, allow_private: bool) -> ManifestEntry | str:
    if isinstance(raw, str):
        raw = {"url": raw}
    if not isinstance(raw, dict) or not isinstance(raw.get("url"), str):
        return "entry without a url"
    if not storable(raw["url"], MAX_URL):
        return "url holds a control character, is not UTF-8 or is too long"
    url = _without_userinfo(_quoted(urljoin(manifest_url, raw["url"].strip())))
    try:
        check_http_url(url, what="image")
    except LocationError as err:
        return str(err)
    refused = literal_refusal(url, manifest_url, allow_private)
    if refused is not None:
        return f"image {redact_url(url)}: {refused}"
    name = raw.get("name")
    if name is not None and (not isinstance(name, str) or not name.strip()):
        return "name is not a non-empty string"
    sha = raw.get("sha256")
    if sha is not None and (not isinstance(sha, str) or not _SHA256.match(sha.lower())):
        return "sha256 is not 64 hex digits"
    size = raw.get("size")
    if size is not None and (not isinstance(size, int) or isinstance(size, bool) or not 0 <= size <= MAX_BIGINT):
        size = None
    entry = ManifestEntry(name.strip() if name else redact_url(url), url, sha.lower() if sha else None, size)
    if not storable(entry.identifier, MAX_NAME if name else MAX_URL) or not storable(entry.file_name):
        return "its name holds a control character or is not UTF-8"
    if not is_image_name(entry.file_name):
        return "not a png, jpg, jpeg or webp name"
    return entry


def fetch_key(source_id: int, identifier: str, token: str) -> str:
    """Names one version of one remote object on this host (its fetched bytes' cache file)."""
    return hashlib.blake2b(f"{source_id}\0{identifier}\0{token}".encode("utf-8", "surrogateescape"),
                           digest_size=16).hexdigest()


def classify_status(status: int) -> str:
    """The kind of a fetch that got HTTP status `status` (2xx is not a failure and never reaches here)."""
    if status in (429, 503):
        return THROTTLED
    if status in (401, 403):
        return FORBIDDEN
    if status in (404, 410):
        return GONE
    return BROKEN


@dataclass(frozen=True)
class PaceRules:
    """How the shared pace moves: halved per throttled response (not below `floor`), doubled back after
    `recover_after` clean responses in a row (not above 1: the configured rate)."""

    recover_after: int = 20
    floor: float = 1 / 32

    def halved(self, factor: float) -> float:
        return max(self.floor, factor / 2)

    def recovered(self, factor: float) -> float:
        return min(1.0, factor * 2)
