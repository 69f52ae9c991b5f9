"""Engines and sessions for the application database, one engine per URL per process.

An engine never changes the schema: migrating is an explicit step (`db.migrate.upgrade`), which the CLI and the
tests take before they use a database.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache

from sqlalchemy import Engine, create_engine
from sqlalchemy.orm import Session, sessionmaker

from stage_e_dagster.db.urls import normalise_url


@lru_cache(maxsize=8)
def get_engine(url: str) -> Engine:
    """A pooled engine for `url`."""
    return create_engine(normalise_url(url), pool_pre_ping=True, pool_size=5, max_overflow=5)


@contextmanager
def session_scope(url: str) -> Iterator[Session]:
    """A session that commits on success and rolls back on error."""
    factory = sessionmaker(get_engine(url), expire_on_commit=False)
    with factory() as session, session.begin():
        yield session
