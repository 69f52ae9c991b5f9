"""The `stage-e` subcommands, one module per concern; `stage_e_dagster.cli` gathers them.

A command resolves the application database once, at its start, with `app_engine` (or `app_url` where a URL itself is
the point: the schema, the dedicated slot connection, printing it) and hands the engine down.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from stage_e_dagster.postgres.locate import app_database_url
from stage_e_dagster.postgres.server import PostgresStartError
from stage_e_dagster.settings import Settings, SettingsError

if TYPE_CHECKING:
    from sqlalchemy import Engine


def settings() -> Settings:
    """The settings from the environment; a bad value is a clear usage error naming the variable."""
    try:
        return Settings.from_env()
    except SettingsError as err:
        raise click.ClickException(f"bad setting: {err}") from err


def app_url(migrate: bool = True) -> str:
    """The application database URL, starting the embedded server if needed and bringing its schema to head
    (unless `migrate` is False); a clear error when the server cannot start."""
    from stage_e_dagster.db.core.migrate import SchemaNotCurrent, require_head, upgrade

    try:
        url = app_database_url(settings())
    except PostgresStartError as err:
        raise click.ClickException(f"cannot start the embedded Postgres: {err}") from err
    if migrate:
        try:
            require_head(url)
        except SchemaNotCurrent:
            upgrade(url)
    return url


def app_engine(migrate: bool = True) -> Engine:
    """The application database's engine (`app_url`, resolved once per process by `db.core.engine.get_engine`)."""
    from stage_e_dagster.db.core.engine import get_engine

    return get_engine(app_url(migrate))
