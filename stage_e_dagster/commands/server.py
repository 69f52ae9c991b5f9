"""`stage-e postgres ...` and `stage-e db upgrade`: the embedded server and the schema."""

from __future__ import annotations

import click

from stage_e_dagster.commands import app_url, settings
from stage_e_dagster.db.core.urls import redact
from stage_e_dagster.postgres.locate import app_database_url, dagster_database_url, embedded_server
from stage_e_dagster.postgres.server import PostgresStartError


@click.group()
def postgres() -> None:
    """The embedded Postgres server under $STAGE_E_HOME (unused when STAGE_E_DATABASE_URL is set)."""


@postgres.command("start")
def postgres_start() -> None:
    """Start the embedded server (harmless when it already runs) and create both databases."""
    server = embedded_server(settings())
    try:
        status = server.start(databases=("stage_e", "dagster"))
    except PostgresStartError as err:
        raise click.ClickException(str(err)) from err
    click.echo(f"running (pid {status.pid}), data in {status.data_dir}")


@postgres.command("stop")
def postgres_stop() -> None:
    """Stop the embedded server."""
    click.echo("stopped" if embedded_server(settings()).stop() else "not running")


@postgres.command("status")
def postgres_status() -> None:
    """Say whether the embedded server runs; exit 1 when it does not."""
    status = embedded_server(settings()).status()
    if status.running:
        click.echo(f"running (pid {status.pid}), data in {status.data_dir}, socket in {status.socket_dir}")
    else:
        click.echo(f"not running (data dir {status.data_dir})")
        raise SystemExit(1)


@postgres.command("url")
@click.option("--dagster", is_flag=True, help="Dagster's storage database instead of the application one.")
def postgres_url(dagster: bool) -> None:
    """Print the database URL (starting the embedded server if needed); passwords are hidden."""
    try:
        url = dagster_database_url(settings()) if dagster else app_database_url(settings())
    except PostgresStartError as err:
        raise click.ClickException(str(err)) from err
    click.echo(redact(url))


@click.group()
def db() -> None:
    """Schema management."""


@db.command("upgrade")
def db_upgrade() -> None:
    """Apply every Alembic migration."""
    from stage_e_dagster.db.core.migrate import upgrade

    upgrade(app_url(migrate=False))
    click.echo("schema is at head")
