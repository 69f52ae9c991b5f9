"""The `stage-e` subcommands, one module per concern; `stage_e_dagster.cli` gathers them."""

from __future__ import annotations

import click

from stage_e_dagster.db.server import PostgresStartError
from stage_e_dagster.db.urls import app_database_url


def app_url() -> str:
    """The application database URL, starting the embedded server if needed; a clear error when it cannot."""
    try:
        return app_database_url()
    except PostgresStartError as err:
        raise click.ClickException(f"cannot start the embedded Postgres: {err}") from err
