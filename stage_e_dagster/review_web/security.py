"""Who may use the review page: the hosts it answers to, signed session cookies, the access and admin tokens, and
CSRF checks.

A request whose `Host` the page does not serve is refused before anything else (`HostPolicy`): on a loopback bind
with no token, a page on `evil.example` whose name an attacker re-points at 127.0.0.1 (DNS rebinding) would
otherwise be same-origin with the review page, read its CSRF token, sign in and vote. The page serves any IP literal
(a rebinding attack needs a name), loopback names on a loopback bind, the host of `STAGE_E_REVIEW_BASE_URL`, and the
names in `STAGE_E_REVIEW_ALLOWED_HOSTS`.

The session lives in one cookie, signed with HMAC-SHA256 under a secret the server draws at start (a restart
signs everyone out; nothing is stored server-side). It carries the reviewer's name, whether they proved the access
token and the admin token, and a CSRF token: every form and every POST carries that token back, and a POST whose
Origin (or `Sec-Fetch-Site`) names another site is refused before it is read. The cookie is HttpOnly and
SameSite=Strict, and Secure when the page is reached over TLS (its base URL is https, or the request came over TLS).
Tokens themselves are never stored in the cookie, in a URL or in a log: they are entered in the
sign-in form and compared in constant time.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import ipaddress
import json
import secrets
import time
from dataclasses import asdict, dataclass, field
from urllib.parse import urlsplit

from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from stage_e_dagster.review_web.pages import secure

SESSION_SECONDS = 12 * 3600
MAX_SKIPPED = 200  # keeps the signed cookie well under the 4 KB browsers allow


def is_loopback(host: str) -> bool:
    """True when `host` only accepts connections from this machine (127.0.0.0/8, ::1, localhost)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip().strip("[]")).is_loopback
    except ValueError:
        return False


def host_name(header: str | None) -> str | None:
    """The host name of a `Host` header (`name`, `name:port`, `[v6]:port`), lower-cased, without a trailing dot."""
    if not header:
        return None
    value = header.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        return value[1:end] if end > 0 else None
    name = value.rsplit(":", 1)[0] if value.count(":") == 1 else value
    return name.rstrip(".") or None


def _literal(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class HostPolicy:
    """The host names the page answers to (see the module docstring); IP literals always."""

    names: frozenset[str]

    @classmethod
    def serving(cls, bind_host: str, base_url: str | None = None, allowed: tuple[str, ...] = ()) -> HostPolicy:
        names = {name.strip().lower().rstrip(".") for name in allowed if name.strip()}
        if is_loopback(bind_host):
            names |= {"localhost"}
        base = urlsplit(base_url).hostname if base_url else None
        if base:
            names.add(base.lower().rstrip("."))
        bind = host_name(bind_host)
        if bind and not _literal(bind):
            names.add(bind)
        return cls(frozenset(names))

    def allows(self, header: str | None) -> bool:
        name = host_name(header)
        return name is not None and (_literal(name) or name in self.names)


def tokens_equal(given: str | None, expected: str | None) -> bool:
    """Constant-time comparison; an unset expected token matches nothing."""
    if not given or not expected:
        return False
    return hmac.compare_digest(given.encode(), expected.encode())


def new_token() -> str:
    """A random token for the access token when none is configured, and for CSRF."""
    return secrets.token_urlsafe(24)


@dataclass
class Session:
    """What the signed cookie holds. `reviewer` is None until someone signs in."""

    csrf: str = field(default_factory=new_token)
    reviewer: str | None = None
    authed: bool = False
    admin: bool = False
    skipped: list[int] = field(default_factory=list)
    flash: str | None = None
    issued: int = field(default_factory=lambda: int(time.time()))

    def skip(self, card_id: int) -> None:
        if card_id not in self.skipped:
            self.skipped = [*self.skipped, card_id][-MAX_SKIPPED:]


class SessionCodec:
    """Signs sessions into cookie values and reads them back; a forged, altered or expired value reads as None."""

    def __init__(self, secret: bytes | None = None) -> None:
        self._secret = secret or secrets.token_bytes(32)

    def _sign(self, payload: bytes) -> str:
        return hmac.new(self._secret, payload, hashlib.sha256).hexdigest()

    def dumps(self, session: Session) -> str:
        payload = base64.urlsafe_b64encode(json.dumps(asdict(session), separators=(",", ":")).encode())
        return f"{payload.decode()}.{self._sign(payload)}"

    def loads(self, value: str | None) -> Session | None:
        if not value or "." not in value:
            return None
        payload, signature = value.rsplit(".", 1)
        if not hmac.compare_digest(signature, self._sign(payload.encode())):
            return None
        try:
            data = json.loads(base64.urlsafe_b64decode(payload.encode()))
            session = Session(**data)
        except (ValueError, TypeError):
            return None
        if time.time() - session.issued > SESSION_SECONDS:
            return None
        return session


def cross_site(headers: dict[str, str] | object, host: str | None) -> bool:
    """True when a request says it was sent by another site than `host`: by `Sec-Fetch-Site` when the browser
    sends it, else by Origin (a `null` origin counts as foreign). Requests with neither (non-browser clients)
    are left to the CSRF token."""
    get = headers.get  # type: ignore[attr-defined]
    site = get("sec-fetch-site")
    if site:
        return site not in ("same-origin", "none")
    origin = get("origin")
    if origin is None:
        return False
    return origin == "null" or urlsplit(origin).netloc.lower() != (host or "").lower()


class HostCheck:
    """Refuses, before anything else, a request whose `Host` the page does not serve (`HostPolicy`)."""

    def __init__(self, app: ASGIApp, policy: HostPolicy) -> None:
        self.app, self.policy = app, policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            host = next((value.decode("latin-1") for name, value in scope.get("headers", ()) if name == b"host"),
                        None)
            if not self.policy.allows(host):
                response = secure(Response("Refused: this page does not serve that host name.", status_code=400,
                                           media_type="text/plain"))
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)
