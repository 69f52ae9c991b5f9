"""Where a request of a remote source may go, decided before it is sent, and a deadline no peer can stretch.

`Gate.target` resolves a URL's host (within the fetch's deadline) and, unless the URL has the manifest's origin or
the source allows private hosts, refuses it when any address the name resolves to is not public
(`domain.addresses.is_public_address`). It returns the address that was checked, and the connection goes to that
address (`remote.http_source`), with the name kept for the Host header and TLS: a name that resolves to a public
address for the check and to loopback for the connection (DNS rebinding) gains nothing.

`Watchdog` holds one wall-clock deadline for everything a request does (connect, TLS, headers, redirects, body):
at the deadline it shuts the connection's socket, so a peer that drips one byte per read timeout cannot hold a
fetch, a sensor tick or a source's lock past it.
"""

from __future__ import annotations

import concurrent.futures as cf
import ipaddress
import socket
import threading
import time
from contextlib import suppress
from dataclasses import dataclass

from stage_e_dagster.domain.addresses import (
    DEFAULT_PORTS,
    host_literal,
    is_public_address,
    names_loopback,
    origin,
    redact_url,
)
from stage_e_dagster.remote.common import StoreError, refused, timed_out

_RESOLVERS = cf.ThreadPoolExecutor(max_workers=4, thread_name_prefix="resolve")


@dataclass(frozen=True)
class Target:
    """Where one request goes: the URL's scheme, host name and port, the address checked for it, and the host's
    key in `fetch_host` (its origin)."""

    scheme: str
    host: str
    port: int
    address: str
    key: str

    @property
    def host_header(self) -> str:
        name = f"[{self.host}]" if ":" in self.host else self.host
        return name if self.port == DEFAULT_PORTS[self.scheme] else f"{name}:{self.port}"


def host_key(url: str) -> str | None:
    """The `fetch_host` key of an http(s) URL: its origin, `scheme://host:port`."""
    found = origin(url)
    if found is None:
        return None
    scheme, host, port = found
    return f"{scheme}://{f'[{host}]' if ':' in host else host}:{port}"


def _resolve(host: str, port: int, deadline: float) -> list[str]:
    literal = host_literal(host)
    if literal is not None:
        return [str(literal)]
    if names_loopback(host):
        return ["127.0.0.1"]
    future = _RESOLVERS.submit(socket.getaddrinfo, host, port, type=socket.SOCK_STREAM)
    try:
        infos = future.result(timeout=max(0.0, deadline - time.monotonic()))
    except cf.TimeoutError:
        raise timed_out(f"resolving {host} took past the deadline") from None
    except OSError as err:
        raise StoreError("broken", "fetch-error", None, f"cannot resolve {host}: {err.strerror or err}") from None
    return list(dict.fromkeys(str(ipaddress.ip_address(info[4][0].split("%")[0])) for info in infos))


@dataclass(frozen=True)
class Gate:
    """The address rule of one source: its manifest's URL (whose origin is trusted) and whether it allows private
    hosts."""

    manifest_url: str
    allow_private: bool = False

    def target(self, url: str, deadline: float) -> Target:
        """Where a request for `url` goes; a `refused` StoreError when the source may not reach it."""
        found = origin(url)
        key = host_key(url)
        if found is None or key is None:
            raise refused(f"{redact_url(url)}: not an http(s) URL")
        scheme, host, port = found
        addresses = _resolve(host, port, deadline)
        if not addresses:
            raise StoreError("broken", "fetch-error", None, f"{host} resolves to no address", key)
        trusted = self.allow_private or origin(self.manifest_url) == found
        if not trusted:
            barred = [a for a in addresses if not is_public_address(a)]
            if barred:
                raise refused(f"{redact_url(url)}: {host} resolves to {barred[0]}, which is not public and not the "
                              "manifest's origin (stage-e sources add --allow-private lifts this)", key)
        return Target(scheme, host, port, addresses[0], key)


class Watchdog:
    """Shuts the watched connection's socket at `deadline` (monotonic seconds); `fired` says whether it did."""

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline
        self.fired = False
        self._conn: object | None = None
        self._lock = threading.Lock()
        self._timer = threading.Timer(max(0.0, deadline - time.monotonic()), self._fire)
        self._timer.daemon = True
        self._timer.start()

    def watch(self, conn: object) -> None:
        """Watch `conn` (an urllib3 connection, and the socket it holds once connected: a response that closes its
        connection keeps reading from that socket) from now on; one watched before is left alone."""
        with self._lock:
            self._conn = conn
            fired = self.fired
        if fired:
            self._shut(conn)

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def _fire(self) -> None:
        with self._lock:
            self.fired = True
            conn = self._conn
        if conn is not None:
            self._shut(conn)

    @staticmethod
    def _shut(conn: object) -> None:
        sock = conn if isinstance(conn, socket.socket) else getattr(conn, "sock", None)
        if sock is not None:
            with suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def cancel(self) -> None:
        self._timer.cancel()
