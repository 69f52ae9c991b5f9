"""The `stage-e` subcommands, one module per concern; `stage_e_dagster.cli` gathers them."""

from __future__ import annotations

import click

from stage_e_dagster.postgres.locate import app_database_url
from stage_e_dagster.postgres.server import PostgresStartError
from stage_e_dagster.settings import Settings, SettingsError


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
