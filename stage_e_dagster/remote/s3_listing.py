"""One S3 listing page read as the store sent it, for the pages `obstore` refuses.

`obstore` parses every key of a listing page into its own path type and refuses the whole page when one key has a
`..` or `.` segment, an empty segment (`a//b`) or a control character; the source would stay unavailable and no key
after that one would ever be listed. `S3Source.pages` reads such a page here instead: one signed ListObjectsV2
request (keys URL-encoded by the store, so any key arrives intact), the keys `obstore` could not fetch named as
refused, the others listed with the same change token `obstore` gives them, and the listing goes on after the page.

Requests are signed with AWS Signature Version 4 (or sent unsigned for a public bucket), path-style, to the
source's endpoint or the region's AWS endpoint. Like every listing request, this one is not counted by the fetch
limiter.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import quote, unquote, urlsplit
from xml.etree import ElementTree

import urllib3

from stage_e_dagster.domain.remote import BROKEN, Credentials, Listed, object_token
from stage_e_dagster.remote.common import StoreError, http_error

EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()
MAX_PAGE_BYTES = 16 * 1024 * 1024
_NS = "{http://s3.amazonaws.com/doc/2006-03-01/}"
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def key_refusal(key: str) -> str | None:
    """Why `obstore` cannot take the key `key` (relative to the source's prefix) in, or None."""
    if not key:
        return "empty key"
    try:
        key.encode("utf-8")
    except UnicodeEncodeError:
        return "key is not valid UTF-8"
    if _CONTROL.search(key):
        return "key holds a control character"
    for segment in key.split("/"):
        if segment == "":
            return "key has an empty segment (//, or a leading or trailing /)"
        if segment in (".", ".."):
            return f"key has a {segment!r} segment"
    return None


def _uri(text: str) -> str:
    return quote(text, safe="-_.~")


@dataclass(frozen=True)
class Signer:
    """AWS Signature Version 4 for S3 requests with no body."""

    credentials: Credentials
    region: str

    def headers(self, method: str, url: str, query: dict[str, str], now: datetime) -> dict[str, str]:
        parts = urlsplit(url)
        stamp, day = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
        headers = {"host": parts.netloc, "x-amz-content-sha256": EMPTY_SHA256, "x-amz-date": stamp}
        if self.credentials.session_token:
            headers["x-amz-security-token"] = self.credentials.session_token
        names = sorted(headers)
        canonical = "\n".join([
            method, quote(parts.path or "/", safe="/-_.~"),
            "&".join(f"{_uri(k)}={_uri(v)}" for k, v in sorted(query.items())),
            "".join(f"{name}:{headers[name].strip()}\n" for name in names), ";".join(names), EMPTY_SHA256])
        scope = f"{day}/{self.region}/s3/aws4_request"
        to_sign = "\n".join(["AWS4-HMAC-SHA256", stamp, scope, hashlib.sha256(canonical.encode()).hexdigest()])
        key = f"AWS4{self.credentials.secret_access_key}".encode()
        for part in (day, self.region, "s3", "aws4_request"):
            key = hmac.new(key, part.encode(), hashlib.sha256).digest()
        signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
        headers["Authorization"] = (f"AWS4-HMAC-SHA256 Credential={self.credentials.access_key_id}/{scope}, "
                                    f"SignedHeaders={';'.join(names)}, Signature={signature}")
        del headers["host"]
        return headers


@dataclass(frozen=True)
class RawPage:
    """One page as the store sent it: its objects (refused ones named), and whether more follow."""

    listed: list[Listed]
    truncated: bool


@dataclass
class RawLister:
    """ListObjectsV2 pages of one bucket and prefix."""

    bucket: str
    prefix: str
    endpoint: str | None
    region: str
    credentials: Credentials | None
    timeout_seconds: float

    def __post_init__(self) -> None:
        base = (self.endpoint or f"https://s3.{self.region}.amazonaws.com").rstrip("/")
        self.url = f"{base}/{_uri(self.bucket)}"
        self.pool = urllib3.PoolManager(num_pools=2, maxsize=1, retries=False)

    def page(self, after: str | None, page_size: int = 1000) -> RawPage:
        """The page after key `after` (relative to the prefix; from the first key when None)."""
        root = f"{self.prefix}/" if self.prefix else ""
        query = {"list-type": "2", "max-keys": str(page_size), "encoding-type": "url", "prefix": root}
        if after:
            query["start-after"] = root + after
        headers = {}
        if self.credentials is not None:
            headers = Signer(self.credentials, self.region).headers("GET", self.url, query, datetime.now(UTC))
        target = self.url + "?" + "&".join(f"{_uri(k)}={_uri(v)}" for k, v in sorted(query.items()))
        try:
            response = self.pool.request("GET", target, headers=headers, preload_content=False, redirect=False,
                                         timeout=urllib3.Timeout(connect=min(10.0, self.timeout_seconds),
                                                                 read=self.timeout_seconds))
            body = response.read(MAX_PAGE_BYTES + 1, decode_content=False)
            response.release_conn()
        except urllib3.exceptions.HTTPError as err:
            raise StoreError(BROKEN, "fetch-error", None, f"listing: {type(err).__name__}") from None
        if response.status != 200:
            raise http_error(response.status, "listing")
        if len(body) > MAX_PAGE_BYTES:
            raise StoreError(BROKEN, "fetch-too-large", 200, "listing page larger than 16 MiB")
        try:
            return self._parse(body, root)
        except (ElementTree.ParseError, ValueError) as err:
            raise StoreError(BROKEN, "fetch-corrupt", 200, f"listing: {type(err).__name__}") from None

    @staticmethod
    def _parse(body: bytes, root: str) -> RawPage:
        doc = ElementTree.fromstring(body)
        listed = []
        for item in doc.iter(f"{_NS}Contents"):
            key = unquote(item.findtext(f"{_NS}Key") or "", errors="surrogateescape")
            if not key.startswith(root):
                continue
            rel = key[len(root):]
            why = key_refusal(rel)
            if why is not None:
                listed.append(Listed(rel, "", refused=why))
                continue
            size = int(item.findtext(f"{_NS}Size") or 0)
            moment = item.findtext(f"{_NS}LastModified")
            modified = datetime.fromisoformat(moment) if moment else None
            listed.append(Listed(rel, object_token(item.findtext(f"{_NS}ETag"), size, modified), size))
        return RawPage(listed, (doc.findtext(f"{_NS}IsTruncated") or "").strip().lower() == "true")
