"""The `stage-e` command: thin shells over the layers underneath."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from stage_e_dagster.db.server import PostgresStartError
from stage_e_dagster.db.urls import app_database_url, dagster_database_url, embedded_server, redact


def _app_url() -> str:
    try:
        return app_database_url()
    except PostgresStartError as err:
        raise click.ClickException(f"cannot start the embedded Postgres: {err}") from err


@click.group()
def main() -> None:
    """Identify proxy-card scans with a streaming Dagster pipeline on Postgres."""


# -- postgres -------------------------------------------------------------------------------------------------
@main.group()
def postgres() -> None:
    """The embedded Postgres server under $STAGE_E_HOME (unused when STAGE_E_DATABASE_URL is set)."""


@postgres.command("start")
def postgres_start() -> None:
    """Start the embedded server (harmless when it already runs) and create both databases."""
    server = embedded_server()
    try:
        status = server.start(databases=("stage_e", "dagster"))
    except PostgresStartError as err:
        raise click.ClickException(str(err)) from err
    click.echo(f"running (pid {status.pid}), data in {status.data_dir}")


@postgres.command("stop")
def postgres_stop() -> None:
    """Stop the embedded server."""
    click.echo("stopped" if embedded_server().stop() else "not running")


@postgres.command("status")
def postgres_status() -> None:
    """Say whether the embedded server runs; exit 1 when it does not."""
    status = embedded_server().status()
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
        url = dagster_database_url() if dagster else app_database_url()
    except PostgresStartError as err:
        raise click.ClickException(str(err)) from err
    click.echo(redact(url))


# -- schema ---------------------------------------------------------------------------------------------------
@main.group()
def db() -> None:
    """Schema management."""


@db.command("upgrade")
def db_upgrade() -> None:
    """Apply every Alembic migration."""
    from stage_e_dagster.db.migrate import upgrade

    upgrade(_app_url())
    click.echo("schema is at head")


# -- catalogue ------------------------------------------------------------------------------------------------
@main.group()
def catalog() -> None:
    """The printing catalogue."""


@catalog.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--symbols", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Directory of <set code>.png set-symbol images.")
def catalog_import(file: Path, symbols: Path | None) -> None:
    """Import a Scryfall bulk-data FILE (a JSON array of card objects); idempotent."""
    from stage_e_dagster.db.catalog_import import CatalogFileError, import_catalog, store_symbol_hashes

    url = _app_url()
    size = file.stat().st_size
    with click.progressbar(length=size, label="importing", show_pos=False, file=sys.stderr) as bar:
        done = [0]

        def progress(position: int) -> None:
            bar.update(position - done[0])
            done[0] = position

        def malformed(index: int, why: str) -> None:
            click.echo(f"\nrecord {index} skipped: {why}", err=True)

        try:
            summary = import_catalog(url, file, on_progress=progress, on_malformed=malformed)
        except CatalogFileError as err:
            raise click.ClickException(str(err)) from err
    if symbols:
        store_symbol_hashes(url, symbols, summary)
    click.echo(
        f"{summary.printings} printings in {len(summary.set_codes)} sets imported, {len(summary.malformed)} malformed"
        + (f"; {summary.symbols_stored} set symbols stored" if symbols else "")
    )
    for code in summary.symbols_unknown_set:
        click.echo(f"symbol {code}.png names no imported set", err=True)
    for name in summary.symbols_unreadable:
        click.echo(f"symbol {name} is unreadable", err=True)


# -- ingest ---------------------------------------------------------------------------------------------------
@main.command()
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--source", "source_key", required=True, help="A short key naming this source.")
def ingest(directory: Path, source_key: str) -> None:
    """Register every image under DIRECTORY as a card (re-running is idempotent)."""
    from stage_e_dagster.db.ingest import ingest_directory

    url = _app_url()
    total = sum(len(files) for _d, _s, files in os.walk(directory))
    with click.progressbar(length=total, label="ingesting", file=sys.stderr) as bar:
        summary = ingest_directory(url, directory, source_key, on_file=lambda _id: bar.update(1))
    for identifier in summary.unreadable:
        click.echo(f"unreadable image: {identifier}", err=True)
    for identifier, reason in summary.refused:
        click.echo(f"refused {identifier}: {reason}", err=True)
    for identifier in summary.vanished:
        click.echo(f"vanished: {identifier}", err=True)
    click.echo(f"ingest {source_key}: {summary.line()}")


# -- status -------------------------------------------------------------------------------------------------
@main.command()
@click.option("--recent", default=5, show_default=True, type=click.IntRange(min=0), help="Latest batches to show.")
def status(recent: int) -> None:
    """The pipeline at a glance: cards, backlog per stage, batches, review queue, OCR slots, envelope trips."""
    from stage_e_dagster.db.status import format_status, pipeline_status

    click.echo(format_status(pipeline_status(_app_url(), recent)))


# -- OCR slots ----------------------------------------------------------------------------------------------
@main.command()
def slots() -> None:
    """List the OCR slots held right now: slot, holder, backend pid, since when."""
    from stage_e_dagster.db.slot_holders import format_slot_holders, list_slot_holders

    click.echo(format_slot_holders(list_slot_holders(_app_url())))


# -- dagster --------------------------------------------------------------------------------------------------
@main.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=3000, show_default=True, type=int)
def dev(host: str, port: int) -> None:
    """Run `dagster dev` (UI, daemon, card stream, sweep) against this project's Postgres."""
    from stage_e_dagster.runtime import PROJECT_ROOT, prepare_dagster_environment

    try:
        prepare_dagster_environment()
    except PostgresStartError as err:
        raise click.ClickException(str(err)) from err
    click.echo(f"Dagster UI on http://{host}:{port} (Ctrl-C stops it; the database keeps running)")
    argv = [sys.executable, "-m", "dagster", "dev", "-w", str(PROJECT_ROOT / "workspace.yaml"),
            "-h", host, "-p", str(port)]
    os.chdir(PROJECT_ROOT)
    os.execv(argv[0], argv)


@main.command("run")
@click.option("--limit", type=click.IntRange(min=1), help="Stop after this many cards.")
@click.option("--batch-size", default=100, show_default=True, type=click.IntRange(min=1))
@click.option("--mode", type=click.Choice(["bulk", "passive"]), default="bulk", show_default=True,
              help="bulk runs are exempt from the operating envelope; passive runs are held to it.")
def run_backlog_command(limit: int | None, batch_size: int, mode: str) -> None:
    """Drive the backlog through the micro_batch job in this process (runs show in the Dagster UI)."""
    from dagster import DagsterInstance

    from stage_e_dagster.bulk import run_backlog
    from stage_e_dagster.db.stream import count_needing_work
    from stage_e_dagster.runtime import prepare_dagster_environment

    try:
        prepare_dagster_environment()
    except PostgresStartError as err:
        raise click.ClickException(str(err)) from err
    url = os.environ["STAGE_E_DATABASE_URL"]
    if mode == "passive":
        from stage_e_dagster.db.trips import open_trips

        halted = open_trips(url)
        if halted:
            raise click.ClickException(
                f"envelope trip {halted[0].id} is open; acknowledge it (stage-e trips ack) before a passive run"
            )
    backlog = count_needing_work(url)
    total = min(backlog, limit) if limit else backlog
    with DagsterInstance.get() as instance, click.progressbar(
        length=total, label=f"{mode} run", file=sys.stderr
    ) as bar:
        summary = run_backlog(instance, url, limit=limit, batch_size=batch_size, mode=mode,
                              on_batch=lambda cards, _status: bar.update(cards))
    click.echo(summary.line())
    if summary.halted:
        click.echo("stopped: the operating envelope tripped; see `stage-e trips list`", err=True)
    if summary.failed_runs:
        click.echo(f"failed runs: {', '.join(summary.failed_runs)}", err=True)
        raise SystemExit(1)


def _attach_groups() -> None:
    from stage_e_dagster.commands.review import review, vote
    from stage_e_dagster.commands.trips import trips
    from stage_e_dagster.demo.cli import demo

    for command in (demo, review, vote, trips):
        main.add_command(command)


_attach_groups()
