"""SQL for oracles and set-up: one statement on its own connection, read back as plain tuples.

`target` is a database URL, a SQLAlchemy Engine (its URL is used) or anything with a `url` attribute (a
`testkit.live.Home`). Each call opens a psycopg2 connection of its own and closes it, so a reading never shares a
transaction or a pooled session with the code under test. Parameters use psycopg2's `%s` style.
"""

from __future__ import annotations

from typing import Any

import psycopg2

from stage_e_dagster.db.core.urls import libpq_dsn
from testkit.server import CONNECT_TIMEOUT


def url_of(target: Any) -> str:
    """The database URL behind `target` (a URL string, an Engine, or an object with a `url`)."""
    if isinstance(target, str):
        return target
    url = target.url
    return url if isinstance(url, str) else url.render_as_string(hide_password=False)


def connect(target: Any, autocommit: bool = True):
    conn = psycopg2.connect(libpq_dsn(url_of(target)), connect_timeout=CONNECT_TIMEOUT)
    conn.autocommit = autocommit
    return conn


def rows(target: Any, sql: str, params: Any = None) -> list[tuple]:
    """Every row of one query."""
    conn = connect(target)
    try:
        with conn.cursor() as cur:
            cur.execute(sql, params)
            return [tuple(row) for row in cur.fetchall()]
    finally:
        conn.close()


def on(conn: Any, sql: str, params: Any = None) -> list[tuple]:
    """Every row of one query on an open connection (from `connect`): for polling loops that must not pay a
    connection per look."""
    with conn.cursor() as cur:
        cur.execute(sql, params)
        return [tuple(row) for row in cur.fetchall()]


def scalar(target: Any, sql: str, params: Any = None) -> Any:
    """The first column of the first row of one query."""
    return rows(target, sql, params)[0][0]


def execute(target: Any, sql: str, params: Any = None) -> int:
    """Run one statement in its own committed transaction; the rows it touched."""
    conn = connect(target, autocommit=False)
    try:
        with conn, conn.cursor() as cur:
            cur.execute(sql, params)
            return cur.rowcount
    finally:
        conn.close()
