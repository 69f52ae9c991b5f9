"""The `stage-e` command: one click group gathering the subcommands in `stage_e_dagster.commands`."""

from __future__ import annotations

import click

from stage_e_dagster.commands.data import catalog, ingest
from stage_e_dagster.commands.dev import dev
from stage_e_dagster.commands.pipeline import run_backlog_command, slots, status
from stage_e_dagster.commands.review import review, vote
from stage_e_dagster.commands.server import db, postgres
from stage_e_dagster.commands.sources import sources
from stage_e_dagster.commands.trips import trips
from stage_e_dagster.demo.cli import demo


@click.group()
def main() -> None:
    """Identify proxy-card scans with a streaming Dagster pipeline on Postgres."""


for command in (postgres, db, catalog, ingest, sources, demo, dev, run_backlog_command, status, slots, review, vote,
                trips):
    main.add_command(command)
