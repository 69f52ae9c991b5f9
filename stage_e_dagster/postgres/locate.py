"""Where the databases are: an existing server named in the settings, or the embedded one.

`Settings.database_url` selects the application database and `Settings.dagster_database_url` Dagster's own
storage. When either is unset the embedded server under `Settings.home` is started and used. This is the edge where
a URL is resolved; everything below it takes an engine or a connection.
"""

from __future__ import annotations

from stage_e_dagster.db.core.urls import normalise_url
from stage_e_dagster.postgres.server import EmbeddedPostgres
from stage_e_dagster.settings import Settings

APP_DATABASE = "stage_e"
DAGSTER_DATABASE = "dagster"


def embedded_server(settings: Settings | None = None) -> EmbeddedPostgres:
    """The embedded server under the settings' home (it may or may not be running)."""
    return EmbeddedPostgres((settings or Settings.from_env()).home / "pg")


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
