"""`stage-e catalog import` and `stage-e ingest`: getting printings and scans into the database."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from stage_e_dagster.commands import app_engine


@click.group()
def catalog() -> None:
    """The printing catalogue."""


@catalog.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--symbols", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Directory of <set code>.png set-symbol images.")
@click.option("--sets", "sets_file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="A Scryfall sets file (the /sets list): each set's printed size, the total after the slash of "
                   "its collector lines.")
def catalog_import(file: Path, symbols: Path | None, sets_file: Path | None) -> None:
    """Import a Scryfall bulk-data FILE (a JSON array of card objects); idempotent."""
    from stage_e_dagster.db.catalog.importer import (
        CatalogFileError,
        import_catalog,
        store_printed_totals,
        store_symbol_hashes,
    )

    engine = app_engine()
    size = file.stat().st_size
    with click.progressbar(length=size, label="importing", show_pos=False, file=sys.stderr) as bar:
        done = [0]

        def progress(position: int) -> None:
            bar.update(position - done[0])
            done[0] = position

        def malformed(index: int, why: str) -> None:
            click.echo(f"\nrecord {index} skipped: {why}", err=True)

        try:
            summary = import_catalog(engine, file, on_progress=progress, on_malformed=malformed)
        except CatalogFileError as err:
            raise click.ClickException(str(err)) from err
    if symbols:
        store_symbol_hashes(engine, symbols, summary)
    if sets_file:
        try:
            with engine.begin() as conn:
                store_printed_totals(conn, sets_file, summary)
        except CatalogFileError as err:
            raise click.ClickException(str(err)) from err
    click.echo(
        f"{summary.printings} printings in {len(summary.set_codes)} sets imported, {len(summary.malformed)} malformed"
        + (f"; {summary.symbols_stored} set symbols stored" if symbols else "")
        + (f"; {summary.totals_stored} printed set sizes stored" if sets_file else "")
    )
    click.echo(f"{summary.changed} printings added or changed; {len(summary.reopened)} cards re-opened for Stage D")
    for code in summary.symbols_unknown_set:
        click.echo(f"symbol {code}.png names no imported set", err=True)
    for name in summary.symbols_unreadable:
        click.echo(f"symbol {name} is unreadable", err=True)
    if summary.totals_unknown_set:
        click.echo(f"{len(summary.totals_unknown_set)} sets in {sets_file.name} name no imported set", err=True)


@click.command()
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--source", "source_key", required=True, help="A short key naming this source.")
def ingest(directory: Path, source_key: str) -> None:
    """Register every image under DIRECTORY as a card (re-running is idempotent); DIRECTORY becomes source
    SOURCE_KEY, which the source_inbox sensor then watches (see `stage-e sources`)."""
    from stage_e_dagster.db.intake.sources import add_source, sync_directory

    engine = app_engine()
    with engine.begin() as conn:
        source, _moved = add_source(conn, source_key, directory)
    total = sum(len(files) for _d, _s, files in os.walk(directory))
    with click.progressbar(length=total, label="ingesting", file=sys.stderr) as bar:
        result = sync_directory(engine, source, full=True, on_file=lambda _id: bar.update(1))
    if result.status == "unavailable":
        raise click.ClickException(f"{directory} is missing or unreadable")
    summary = result.summary
    for identifier in summary.unreadable:
        click.echo(f"unreadable image: {identifier}", err=True)
    for identifier, reason in summary.refused:
        click.echo(f"refused {identifier}: {reason}", err=True)
    for identifier in summary.vanished:
        click.echo(f"vanished: {identifier}", err=True)
    click.echo(f"ingest {source_key}: {summary.line()}")
