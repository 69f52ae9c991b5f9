"""`stage-e sources add|list|sync`: the directories card scans come from, registered in the `source` table.

Registering is all it takes: while `stage-e dev` runs, the `source_inbox` sensor notices files that appear, change
or vanish in every registered directory and syncs them into `card`, and the card stream takes them on from there.
"""

from __future__ import annotations

from pathlib import Path

import click

from stage_e_dagster.commands import app_engine


@click.group()
def sources() -> None:
    """Source directories: where card scans come from (the source_inbox sensor watches each one)."""


@sources.command("add")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--key", required=True, help="A short key naming this source (card identifiers are paths under it).")
def add_command(directory: Path, key: str) -> None:
    """Register DIRECTORY as source KEY (again with another directory: the source moves there)."""
    from stage_e_dagster.db.intake.sources import add_source

    key = key.strip()
    if not key:
        raise click.UsageError("--key must not be blank")
    with app_engine().begin() as conn:
        row, moved_from = add_source(conn, key, directory)
    if moved_from:
        click.echo(f"source {row.key} moved from {moved_from} to {row.location}; its next sync reads every file")
    else:
        click.echo(f"source {row.key}: {row.location}")
    click.echo("the source_inbox sensor syncs it while `stage-e dev` runs (or now: stage-e sources sync)")


@sources.command("list")
def list_command() -> None:
    """Every registered source: key, directory, cards (and how many are missing), last sync."""
    from stage_e_dagster.db.intake.sources import card_counts, list_sources

    with app_engine().connect() as conn:
        rows = list_sources(conn)
        counts = card_counts(conn)
    if not rows:
        click.echo("no source registered (stage-e sources add DIR --key K)")
        return
    for row in rows:
        cards, missing = counts.get(row.key, (0, 0))
        synced = f"{row.synced_at:%Y-%m-%d %H:%M:%S %Z}" if row.synced_at else "never"
        here = "" if Path(row.location).is_dir() else "  (directory missing)"
        click.echo(f"{row.key:<16} {cards:>8} cards ({missing} missing)  synced {synced}  {row.location}{here}")


@sources.command("sync")
@click.argument("keys", nargs=-1)
@click.option("--full", is_flag=True, help="Read every file, not only those changed since the last sync.")
def sync_command(keys: tuple[str, ...], full: bool) -> None:
    """Sync the sources named (default: every source) now, in this process, as the card_sources asset does."""
    from stage_e_dagster.db.intake.sources import list_sources, sync_source

    engine = app_engine()
    with engine.connect() as conn:
        rows = list_sources(conn, list(keys) or None)
    unknown = sorted(set(keys) - {row.key for row in rows})
    if unknown:
        raise click.ClickException(f"no source registered as {', '.join(unknown)}")
    for row in rows:
        result = sync_source(engine, row, full=full)
        if result.status == "unavailable":
            click.echo(f"{row.key}: {row.location} is missing or unreadable; left as it was", err=True)
        else:
            click.echo(f"{row.key}: {result.summary.line()} ({result.seconds:.1f} s)")
