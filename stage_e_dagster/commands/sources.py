"""`stage-e sources add|list|sync`: where card scans come from (directories, S3-compatible prefixes, HTTP
manifests), registered in the `source` table.

Registering is all it takes: while `stage-e dev` runs, the `source_inbox` sensor notices files that appear, change
or vanish in every registered directory, lists every remote source, and syncs them into `card`, and the card stream
takes them on from there (a remote card's bytes are fetched at Stage C).
"""

from __future__ import annotations

from pathlib import Path

import click

from stage_e_dagster.commands import app_engine


@click.group()
def sources() -> None:
    """Source directories: where card scans come from (the source_inbox sensor watches each one)."""


@sources.command("add")
@click.argument("location")
@click.option("--key", required=True, help="A short key naming this source (card identifiers are paths under it).")
@click.option("--endpoint", help="s3:// only: the S3-compatible store's endpoint URL (default: AWS for --region).")
@click.option("--region", help="s3:// only: the bucket's region (default us-east-1).")
@click.option("--credentials", "credentials", metavar="NAME",
              help="s3:// only: the credential set to sign with; its secrets are read from "
                   "STAGE_E_S3_CREDENTIALS_<NAME>_ACCESS_KEY_ID and _SECRET_ACCESS_KEY (default: anonymous).")
@click.option("--allow-private", is_flag=True,
              help="http(s) manifests only: let its image URLs (and their redirects) reach loopback, private and "
                   "link-local hosts off the manifest's own origin (default: public addresses only; "
                   "docs/deployment.md). Registering again without it takes it back.")
def add_command(location: str, key: str, endpoint: str | None, region: str | None, credentials: str | None,
                allow_private: bool) -> None:
    """Register LOCATION as source KEY: a directory, s3://bucket/prefix, or an http(s):// JSON manifest of image
    URLs (again with another location: the source moves there)."""
    from stage_e_dagster.db.intake.sources import add_remote_source, add_source
    from stage_e_dagster.domain import remote
    from stage_e_dagster.domain.addresses import has_userinfo, shown_location

    key = key.strip()
    if not key:
        raise click.UsageError("--key must not be blank")
    if not remote.is_remote(location):
        if endpoint or region or credentials or allow_private:
            raise click.UsageError("--endpoint, --region, --credentials and --allow-private are for remote sources")
        directory = Path(location)
        if not directory.is_dir():
            raise click.BadParameter(f"Directory '{location}' does not exist.", param_hint="'LOCATION'")
        with app_engine().begin() as conn:
            row, moved_from = add_source(conn, key, directory)
    else:
        try:
            where = remote.parse_location(location)
            if where.kind != "s3" and (endpoint or region or credentials):
                raise click.UsageError("--endpoint, --region and --credentials are for s3:// sources")
            if where.kind != "http" and allow_private:
                raise click.UsageError("--allow-private is for http(s) manifests")
            if has_userinfo(location) or (endpoint and has_userinfo(endpoint)):
                raise remote.LocationError("a URL with user:password@ would be stored and shown; it is refused "
                                           "(S3 signs with a named --credentials set)")
            if endpoint:
                remote.check_http_url(endpoint, what="endpoint")
        except remote.LocationError as err:
            raise click.BadParameter(str(err), param_hint="'LOCATION'") from None
        if credentials is not None and not remote.CREDENTIAL_NAME.match(credentials):
            raise click.BadParameter("letters, digits and _ only", param_hint="'--credentials'")
        try:
            with app_engine().begin() as conn:
                row, moved_from = add_remote_source(conn, key, where, endpoint=endpoint, region=region,
                                                    credentials=credentials, allow_private=allow_private)
        except ValueError as err:
            raise click.ClickException(str(err)) from None
    shown = shown_location(row.location)
    if moved_from:
        click.echo(f"source {row.key} moved from {shown_location(moved_from)} to {shown}; its next sync reads "
                   "every file")
    else:
        click.echo(f"source {row.key}: {shown}{' (private hosts allowed)' if row.allow_private else ''}")
    click.echo("the source_inbox sensor syncs it while `stage-e dev` runs (or now: stage-e sources sync)")


@sources.command("list")
def list_command() -> None:
    """Every registered source: key, location, cards (and how many are missing), last sync."""
    from stage_e_dagster.db.intake.sources import card_counts, list_sources
    from stage_e_dagster.domain.addresses import shown_location

    with app_engine().connect() as conn:
        rows = list_sources(conn)
        counts = card_counts(conn)
    if not rows:
        click.echo("no source registered (stage-e sources add DIR --key K)")
        return
    for row in rows:
        cards, missing = counts.get(row.key, (0, 0))
        synced = f"{row.synced_at:%Y-%m-%d %H:%M:%S %Z}" if row.synced_at else "never"
        here = "" if row.remote or Path(row.location).is_dir() else "  (directory missing)"
        if row.remote:
            here = (f"  ({row.kind}{', credentials ' + row.credentials if row.credentials else ''}"
                    f"{', private hosts allowed' if row.allow_private else ''})")
        click.echo(f"{row.key:<16} {cards:>8} cards ({missing} missing)  synced {synced}  "
                   f"{shown_location(row.location)}{here}")


@sources.command("sync")
@click.argument("keys", nargs=-1)
@click.option("--full", is_flag=True, help="Read every file, not only those changed since the last sync.")
def sync_command(keys: tuple[str, ...], full: bool) -> None:
    """Sync the sources named (default: every source) now, in this process, as the card_sources asset does."""
    from stage_e_dagster.control.intake import sync_source
    from stage_e_dagster.db.intake.sources import list_sources

    engine = app_engine()
    with engine.connect() as conn:
        rows = list_sources(conn, list(keys) or None)
    unknown = sorted(set(keys) - {row.key for row in rows})
    if unknown:
        raise click.ClickException(f"no source registered as {', '.join(unknown)}")
    for row in rows:
        result = sync_source(engine, row, full=full)
        if result.status == "unavailable":
            why = result.detail or "is missing or unreadable"
            click.echo(f"{row.key}: {result.location} {why}; left as it was", err=True)
        else:
            click.echo(f"{row.key}: {result.summary.line()} ({result.seconds:.1f} s)")
            for identifier, reason in result.summary.refused:
                click.echo(f"refused {identifier}: {reason}", err=True)
