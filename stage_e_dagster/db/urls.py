"""Where the databases are: an existing server named in the settings, or the embedded one.

`Settings.database_url` selects the application database and `Settings.dagster_database_url` Dagster's own
storage. When either is unset the embedded server under `Settings.home` is started and used.
"""

from __future__ import annotations

from sqlalchemy.engine import make_url

from stage_e_dagster.db.server import EmbeddedPostgres
from stage_e_dagster.settings import Settings

APP_DATABASE = "stage_e"
DAGSTER_DATABASE = "dagster"


def embedded_server(settings: Settings | None = None) -> EmbeddedPostgres:
    """The embedded server under the settings' home (it may or may not be running)."""
    return EmbeddedPostgres((settings or Settings.from_env()).home / "pg")


def normalise_url(url: str) -> str:
    """Force the psycopg2 driver: SQLAlchemy 2.1 reads a bare `postgresql://` as psycopg 3."""
    parsed = make_url(url)
    if parsed.drivername not in ("postgresql", "postgres"):
        return url
    return parsed.set(drivername="postgresql+psycopg2").render_as_string(hide_password=False)


def app_database_url(settings: Settings | None = None) -> str:
    """The application database URL, starting the embedded server when no URL is configured."""
    settings = settings or Settings.from_env()
    return _resolve(settings, settings.database_url, APP_DATABASE)


def dagster_database_url(settings: Settings | None = None) -> str:
    """Dagster's storage URL, starting the embedded server when no URL is configured."""
    settings = settings or Settings.from_env()
    return _resolve(settings, settings.dagster_database_url, DAGSTER_DATABASE)


def _resolve(settings: Settings, configured: str | None, database: str) -> str:
    if configured:
        return normalise_url(configured)
    server = embedded_server(settings)
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
