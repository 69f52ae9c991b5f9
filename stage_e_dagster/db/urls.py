"""Where the databases are: an existing server named by environment variables, or the embedded one.

`STAGE_E_DATABASE_URL` selects the application database and `STAGE_E_DAGSTER_DATABASE_URL` Dagster's own storage.
When either is unset the embedded server under `$STAGE_E_HOME` (default `./.stage_e`) is started and used.
"""

from __future__ import annotations

import os
from pathlib import Path

from sqlalchemy.engine import make_url

from stage_e_dagster.db.server import EmbeddedPostgres

APP_DATABASE = "stage_e"
DAGSTER_DATABASE = "dagster"
APP_URL_VAR = "STAGE_E_DATABASE_URL"
DAGSTER_URL_VAR = "STAGE_E_DAGSTER_DATABASE_URL"


def stage_e_home() -> Path:
    return Path(os.environ.get("STAGE_E_HOME", ".stage_e")).absolute()


def embedded_server() -> EmbeddedPostgres:
    return EmbeddedPostgres(stage_e_home() / "pg")


def normalise_url(url: str) -> str:
    """Force the psycopg2 driver: SQLAlchemy 2.1 reads a bare `postgresql://` as psycopg 3."""
    parsed = make_url(url)
    if parsed.drivername not in ("postgresql", "postgres"):
        return url
    return parsed.set(drivername="postgresql+psycopg2").render_as_string(hide_password=False)


def app_database_url() -> str:
    """The application database URL, starting the embedded server when no URL is configured."""
    return _resolve(APP_URL_VAR, APP_DATABASE)


def dagster_database_url() -> str:
    """Dagster's storage URL, starting the embedded server when no URL is configured."""
    return _resolve(DAGSTER_URL_VAR, DAGSTER_DATABASE)


def _resolve(var: str, database: str) -> str:
    configured = os.environ.get(var)
    if configured:
        return normalise_url(configured)
    server = embedded_server()
    server.start(databases=(APP_DATABASE, DAGSTER_DATABASE))
    return server.url(database)


def redact(url: str) -> str:
    """A URL safe to print: the password hidden."""
    parsed = make_url(url)
    return url if parsed.password is None else parsed.render_as_string(hide_password=True)


def libpq_dsn(url: str) -> str:
    """The libpq form of a SQLAlchemy URL, for dedicated psycopg2 connections."""
    parsed = make_url(normalise_url(url))
    parts = {"dbname": parsed.database, "user": parsed.username, "password": parsed.password,
             "host": parsed.host or parsed.query.get("host"), "port": parsed.port}
    for key, value in parsed.query.items():
        if key != "host":
            parts[key] = value
    return " ".join(f"{k}='{_escape(str(v))}'" for k, v in parts.items() if v not in (None, ""))


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("'", "\\'")
