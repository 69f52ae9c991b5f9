"""Engines and sessions for the application database, one engine per URL per process.

`get_engine` is called at the edges only (the `AppDatabase` resource, the CLI's `commands.app_engine`, the test kit):
everything below them takes the engine, or a connection opened from it.

An engine never changes the schema: migrating is an explicit step (`db.core.migrate.upgrade`), which the CLI and the
tests take before they use a database.

Pooled connections are checked for life at checkout only when they sat idle in the pool for `IDLE_PING_SECONDS`
or more: a connection that was in use a moment ago is alive (a Stage C batch checks one out per card, and a ping
on each was a round trip per card for the parent and for Postgres). A dead idle connection (a restarted server, a
terminated backend) is replaced at checkout, as `pool_pre_ping` would.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

from sqlalchemy import Engine, create_engine, event, exc
from sqlalchemy.orm import Session, sessionmaker

from stage_e_dagster.db.core.urls import normalise_url

IDLE_PING_SECONDS = 2.0


@lru_cache(maxsize=8)
def get_engine(url: str) -> Engine:
    """A pooled engine for `url` whose idle connections are pinged at checkout."""
    engine = create_engine(normalise_url(url), pool_size=5, max_overflow=5)
    event.listen(engine, "checkin", _checked_in)
    event.listen(engine, "checkout", _checked_out)
    return engine


def _checked_in(dbapi_conn: Any, record: Any) -> None:
    record.info["idle_since"] = time.monotonic()


def _checked_out(dbapi_conn: Any, record: Any, proxy: Any) -> None:
    """Ping a connection that sat idle; a dead one makes the pool connect afresh (it retries the checkout)."""
    idle_since = record.info.get("idle_since")
    if idle_since is None or time.monotonic() - idle_since < IDLE_PING_SECONDS:
        return
    try:
        with dbapi_conn.cursor() as cur:
            cur.execute("SELECT 1")
    except Exception as err:  # noqa: BLE001 - any failure of the ping means the connection is unusable
        raise exc.DisconnectionError(f"idle connection is dead: {type(err).__name__}") from err


@contextmanager
def session_scope(engine: Engine) -> Iterator[Session]:
    """A session on `engine` that commits on success and rolls back on error."""
    factory = sessionmaker(engine, expire_on_commit=False)
    with factory() as session, session.begin():
        yield session
