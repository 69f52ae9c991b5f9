"""What every store client shares: the one error a request ends in and an open object's bytes (a listed object is
`domain.remote.Listed`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from stage_e_dagster.domain.remote import BROKEN, FORBIDDEN, GONE, REFUSED, classify_status

CHUNK_BYTES = 64 * 1024


class StoreError(Exception):
    """A request that did not give the bytes: its kind (`domain.remote`), the skip reason it would name, the HTTP
    status if one came back, a short detail (never a secret), and the host that answered (or refused)."""

    def __init__(self, kind: str, reason: str, status: int | None = None, detail: str = "",
                 host: str | None = None) -> None:
        super().__init__(f"{reason} ({status or 'no status'}): {detail}")
        self.kind, self.reason, self.status, self.detail, self.host = kind, reason, status, detail[:300], host


def http_error(status: int, detail: str = "", host: str | None = None) -> StoreError:
    kind = classify_status(status)
    reason = {FORBIDDEN: "fetch-forbidden", GONE: "fetch-gone", BROKEN: "fetch-error"}.get(kind, "fetch-throttled")
    return StoreError(kind, reason, status, detail, host)


def refused(detail: str, host: str | None = None) -> StoreError:
    """A URL the source may not reach (`domain.addresses`): no request was sent."""
    return StoreError(REFUSED, "fetch-refused", None, detail, host)


def timed_out(detail: str, host: str | None = None, status: int | None = None) -> StoreError:
    return StoreError(BROKEN, "fetch-timeout", status, detail, host)


@dataclass
class Body:
    """An open object: its declared size (if the store said), its bytes as chunks, and the host that sent them."""

    chunks: Iterator[bytes]
    size: int | None
    close: Callable[[], None] = lambda: None
    host: str | None = None


Acquire = Callable[[], None]
"""Waits for the limiter's grant; called right before each request of a fetch."""
