"""Where a remote source may fetch from, and URLs as they may be stored and shown. Pure: no DNS, no network.

**What a source may reach.** The operator's own input is trusted as given: the manifest URL and an S3 endpoint (a
MinIO on the LAN is fine). What a manifest says is not: an image URL, and every redirect hop of its fetch, must
resolve to public addresses only (no loopback, private, link-local, shared, multicast, reserved or unspecified
address), unless it has the manifest's own origin (scheme, host and port), or the source allows private hosts
(`stage-e sources add --allow-private`). `literal_refusal` applies the rule where no DNS is needed (an IP literal,
`localhost`), so a manifest line naming one is refused at listing; `remote.address` applies it to every resolved
address at fetch time, and the connection goes to the address that was checked.

**No secret is shown.** `redact_url` drops a URL's userinfo and hides the values of query parameters whose names
say they hold a secret (`token`, `X-Amz-Signature`, `sig`, `api_key`, ...). Identifiers, change tokens, skip
details, metadata, messages and the command's output use it; only the columns a fetch reads its URL from
(`source.location`, `card.remote_url`) keep the query a signed URL needs.
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import SplitResult, parse_qsl, quote, urlsplit

DEFAULT_PORTS = {"http": 80, "https": 443}
_SHARED = ipaddress.ip_network("100.64.0.0/10")  # carrier-grade NAT: not global, not "private" to Python
_SECRET_NAME = re.compile(
    r"(?:^|[-_.])(?:token|secret|sig|signature|key|apikey|password|passwd|pass|pwd|auth|authorization|credential|"
    r"credentials|session|sessionid|jwt|code|policy|accesstoken)(?:$|[-_.])", re.IGNORECASE)
REDACTED = "REDACTED"

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def is_public_address(address: Address | str) -> bool:
    """Whether a fetch driven by a manifest may connect to `address`: a global unicast address (an IPv4-mapped
    IPv6 address is judged as the IPv4 address it carries)."""
    ip = ipaddress.ip_address(address) if isinstance(address, str) else address
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_multicast or ip.is_unspecified or ip.is_loopback or ip.is_link_local or ip.is_private:
        return False
    if isinstance(ip, ipaddress.IPv4Address) and ip in _SHARED:
        return False
    return ip.is_global


def origin(url: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of an http(s) URL, the port made explicit and the host lower-cased; None when it has
    none (or cannot be parsed)."""
    try:
        parts = urlsplit(url)
        host, port = parts.hostname, parts.port
    except ValueError:
        return None
    if parts.scheme not in DEFAULT_PORTS or not host:
        return None
    return parts.scheme, host.rstrip(".").lower(), port or DEFAULT_PORTS[parts.scheme]


def same_origin(url: str, other: str) -> bool:
    found = origin(url)
    return found is not None and found == origin(other)


def host_literal(host: str) -> Address | None:
    """The address a host names without DNS: an IP literal (brackets allowed), else None."""
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def names_loopback(host: str) -> bool:
    """`localhost` and its subdomains resolve to loopback on every system that follows RFC 6761."""
    name = host.rstrip(".").lower()
    return name == "localhost" or name.endswith(".localhost")


def literal_refusal(url: str, manifest_url: str, allow_private: bool) -> str | None:
    """Why a manifest entry's URL may not be fetched, judged without DNS (an IP literal or `localhost` that is
    not public, off the manifest's origin); None when nothing is known against it yet."""
    if allow_private or same_origin(url, manifest_url):
        return None
    found = origin(url)
    if found is None:
        return "not an http(s) URL"
    host = found[1]
    if names_loopback(host):
        return f"host {host} is loopback and not the manifest's origin"
    literal = host_literal(host)
    if literal is not None and not is_public_address(literal):
        return f"address {literal} is not public and not the manifest's origin"
    return None


def _pairs(query: str) -> list[tuple[str, str]]:
    return parse_qsl(query, keep_blank_values=True) if query else []


def _redacted_query(query: str) -> str:
    if not query:
        return query
    shown = []
    for name, value in _pairs(query):
        kept = REDACTED if value and _SECRET_NAME.search(name) else value
        shown.append(f"{quote(name, safe='')}={quote(kept, safe='')}")
    return "&".join(shown)


def redact_url(url: str) -> str:
    """`url` without userinfo and with the values of secret-named query parameters hidden (see the module
    docstring); a string that is no URL is returned as it is, one that cannot be parsed as `<unparsable URL>`."""
    try:
        parts = urlsplit(url)
        netloc = parts.netloc.rpartition("@")[2]
    except ValueError:
        return "<unparsable URL>"
    if not parts.scheme or not parts.netloc:
        return url
    secret_query = any(_SECRET_NAME.search(name) for name, _ in _pairs(parts.query))
    if netloc == parts.netloc and not secret_query:
        return url
    return SplitResult(parts.scheme, netloc, parts.path, _redacted_query(parts.query), parts.fragment).geturl()


def shown_location(location: str) -> str:
    """A source's location as it may be printed or stored in metadata: a remote URL redacted, a directory as is."""
    if location.startswith(("http://", "https://", "s3://")):
        return redact_url(location)
    return location


def has_userinfo(url: str) -> bool:
    try:
        return "@" in urlsplit(url).netloc
    except ValueError:
        return False
