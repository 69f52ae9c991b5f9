"""`stage-e run`, `status` and `slots`: running the pipeline and seeing where it stands."""

from __future__ import annotations

import json
import re
import sys

import click

from stage_e_dagster.commands import app_engine, app_url, settings
from stage_e_dagster.postgres.server import PostgresStartError
from stage_e_dagster.settings import default_note


@click.command()
@click.option("--recent", default=5, show_default=True, type=click.IntRange(min=0), help="Latest batches to show.")
@click.option("--json", "as_json", is_flag=True, help="One JSON document (keys documented in the README).")
def status(recent: int, as_json: bool) -> None:
    """The pipeline at a glance: cards by state, backlog per stage, batches, review queue, OCR slots, envelope
    trips, and (with --json, when Dagster's storage answers) the run queue.

    Batches that died (their process is gone, or silent past the reclaim age) are reclaimed first."""
    from stage_e_dagster.control.reaper import reclaim_dead_batches
    from stage_e_dagster.db.reporting.status import format_status, pipeline_status, status_document

    engine = app_engine()
    reclaimed = reclaim_dead_batches(None, engine, settings().reclaim_after_seconds)
    for row in reclaimed:
        click.echo(f"reclaimed batch {row.run_id}: {row.failure_reason}", err=True)
    state = pipeline_status(engine, recent)
    if not as_json:
        click.echo(format_status(state))
        return
    document = status_document(state, run_queue(), [row.run_id for row in reclaimed])
    click.echo(json.dumps(document, indent=2))


def run_queue() -> dict[str, object]:
    """Queued and started micro_batch runs from Dagster's run storage, or why it could not be read."""
    try:
        from dagster import DagsterInstance

        from stage_e_dagster.control.run_queue import queue_depth
        from stage_e_dagster.runtime import prepare_dagster_environment

        prepare_dagster_environment(settings())
        with DagsterInstance.get() as instance:
            return {"reachable": True, **queue_depth(instance), "error": None}
    except Exception as err:  # noqa: BLE001 - any failure means the queue cannot be read; status goes on
        first = re.sub(r"://[^:/@\s]+:[^@\s]+@", "://***@", (str(err).strip().splitlines() or [""])[0])[:200]
        return {"reachable": False, "queued": None, "started": None, "error": f"{type(err).__name__}: {first}"}


@click.command()
def slots() -> None:
    """List the OCR slots held right now: slot, holder, backend pid, since when."""
    from stage_e_dagster.db.slots.holders import format_slot_holders, list_slot_holders

    click.echo(format_slot_holders(list_slot_holders(app_url())))


@click.command("run")
@click.option("--limit", type=click.IntRange(min=1), help="Stop after this many cards.")
@click.option("--batch-size", type=click.IntRange(min=1),
              help=f"Cards per batch ({default_note('batch_size')}).")
@click.option("--mode", type=click.Choice(["bulk", "passive"]), default="bulk", show_default=True,
              help="bulk runs are exempt from the operating envelope; passive runs are held to it.")
@click.option("--override-trip", "override_trip", metavar="NOTE",
              help="bulk only: run although an envelope trip is open; NOTE (why) is kept in each ledger row.")
def run_backlog_command(limit: int | None, batch_size: int | None, mode: str, override_trip: str | None) -> None:
    """Drive the backlog through the micro_batch job in this process (runs show in the Dagster UI)."""
    from dagster import DagsterInstance

    from stage_e_dagster.bulk import DatabaseLost, run_backlog
    from stage_e_dagster.control.gates import bulk_refusal, current_trips, trip_reason
    from stage_e_dagster.db.work.queue import count_needing_work
    from stage_e_dagster.runtime import prepare_dagster_environment

    config = settings()
    try:
        prepare_dagster_environment(config)
    except PostgresStartError as err:
        raise click.ClickException(str(err)) from err
    engine = app_engine()
    batch_size = batch_size or config.batch_size
    if override_trip is not None and (mode != "bulk" or not override_trip.strip()):
        raise click.UsageError("--override-trip takes a non-blank note and works with --mode bulk only")
    trips = current_trips(engine)
    refusal = trip_reason(trips) if mode == "passive" else bulk_refusal(trips, override_trip)
    if refusal:
        raise click.ClickException(refusal)
    with engine.connect() as conn:
        backlog = count_needing_work(conn)
    total = min(backlog, limit) if limit else backlog
    try:
        with DagsterInstance.get() as instance, click.progressbar(
            length=total, label=f"{mode} run", file=sys.stderr
        ) as bar:
            summary = run_backlog(instance, engine, limit=limit, batch_size=batch_size, mode=mode,
                                  trip_override=override_trip, reclaim_after_seconds=config.reclaim_after_seconds,
                                  on_batch=lambda cards, _status: bar.update(cards))
    except DatabaseLost as err:
        raise click.ClickException(str(err)) from None
    for run_id in summary.reclaimed:
        click.echo(f"reclaimed the dead batch {run_id}: its cards are offered again", err=True)
    click.echo(summary.line())
    if summary.halted:
        click.echo("stopped: a batch halted (envelope trip or gate); see `stage-e trips list`", err=True)
    if summary.failed_runs:
        click.echo(f"failed runs: {', '.join(summary.failed_runs)}", err=True)
        raise SystemExit(1)
