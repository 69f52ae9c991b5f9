"""Session advisory locks on a dedicated connection: what an OCR slot is in the database.

Each lock connection is its own autocommit psycopg2 connection, never a pooled one (a pool may close or reuse it
and silently drop the lock). The server releases a session's locks when the session ends, so a lock lives exactly
as long as the process holding its connection. The connection runs no query while it holds locks (a session
inside a query is not ended by its client's death until the query finishes). TCP keepalives on both ends end the
session of a vanished host within about 25 s.

A lock connection is therefore opened from a URL turned into a libpq DSN (an engine's `url`, or the URL a worker
process receives across the process boundary), never checked out of an engine: with `db.slots` and
`db.judgement.identity_groups.ContentLocks`, this is where `db/` takes a URL, by design.
"""

from __future__ import annotations

import select
from typing import Any

import psycopg2
import psycopg2.extensions
from sqlalchemy.engine import URL

from stage_e_dagster.db.core.urls import libpq_dsn

MAX_APPLICATION_NAME = 63  # NAMEDATALEN - 1: the server truncates anything longer
# Client side: libpq notices a vanished server. Server side (per-session GUCs): the backend notices a vanished
# client host and ends the session, which is what frees its locks: 10 s idle + 3 probes x 5 s = about 25 s.
KEEPALIVES = {"keepalives": 1, "keepalives_idle": 10, "keepalives_interval": 5, "keepalives_count": 3}
SERVER_OPTIONS = (
    "-c tcp_keepalives_idle=10 -c tcp_keepalives_interval=5 -c tcp_keepalives_count=3"
    " -c idle_session_timeout=0 -c idle_in_transaction_session_timeout=0"
)

LockConnection = psycopg2.extensions.connection
Key = tuple[int, int]


class LockUrlError(ValueError):
    """The database URL does not parse as a Postgres URL (the message never repeats it)."""


def lock_connection_params(url: str | URL, application_name: str, connect_timeout: int) -> dict[str, Any]:
    """libpq parameters of a lock connection: keepalives both ways, no idle timeouts, a named session."""
    try:
        params: dict[str, Any] = psycopg2.extensions.parse_dsn(libpq_dsn(url))
    except Exception:  # noqa: BLE001 - the message may echo the URL and its password
        raise LockUrlError("database_url is not a valid Postgres URL") from None
    params.update(KEEPALIVES)
    params["options"] = f"{params.get('options', '')} {SERVER_OPTIONS}".strip()
    params["application_name"] = application_name[:MAX_APPLICATION_NAME]
    params["connect_timeout"] = max(2, connect_timeout)
    return params


def open_lock_connection(params: dict[str, Any]) -> LockConnection:
    """A fresh autocommit connection for holding locks (raises psycopg2.Error when it cannot connect)."""
    conn = psycopg2.connect(**params)
    conn.autocommit = True
    return conn


def try_lock(conn: LockConnection, key: Key) -> bool:
    """Take the session lock `key` if it is free; never waits."""
    with conn.cursor() as cur:
        cur.execute("SELECT pg_try_advisory_lock(%s, %s)", key)
        row = cur.fetchone()
    return bool(row and row[0])


def try_lock_many(conn: LockConnection, keys: list[Key]) -> list[bool]:
    """`try_lock` for each key in order, in one round trip; never waits."""
    if not keys:
        return []
    with conn.cursor() as cur:
        cur.execute("SELECT pg_try_advisory_lock(k1, k2) FROM unnest(%s::int[], %s::int[]) WITH ORDINALITY "
                    "AS t(k1, k2, i) ORDER BY i", ([k[0] for k in keys], [k[1] for k in keys]))
        return [bool(row[0]) for row in cur.fetchall()]


def unlock(conn: LockConnection, key: Key) -> bool:
    """Release the session lock `key`; False when this session did not hold it."""
    with conn.cursor() as cur:
        cur.execute("SELECT pg_advisory_unlock(%s, %s)", key)
        row = cur.fetchone()
    return bool(row and row[0])


def session_lost(conn: LockConnection) -> bool:
    """Whether the server ended this lock session (backend terminated, server stopped or restarted, client host
    timed out), which released every lock it held. Free while the session is quiet: only when the server has sent
    something does it confirm with a round trip."""
    if conn.closed:
        return True
    try:
        readable, _, _ = select.select([conn], [], [], 0)
        if not readable:
            return False
        with conn.cursor() as cur:
            cur.execute("SELECT 1")
    except (psycopg2.Error, OSError, ValueError):
        return True
    return bool(conn.closed)
