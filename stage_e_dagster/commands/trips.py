"""`stage-e trips`: list envelope trips and acknowledge one with a note (the only way the stream reopens)."""

from __future__ import annotations

import click

from stage_e_dagster.commands import app_engine
from stage_e_dagster.db.runs import trips as trip_store


def _value(number: float | None) -> str:
    return "-" if number is None else f"{number:g}"


def _line(trip: trip_store.Trip) -> str:
    line = (f"{trip.id}  {trip.bar:<18} observed {_value(trip.observed):>8} > ceiling {_value(trip.ceiling):<8}"
            f"  run {trip.run_id or '-'}  tripped {trip.tripped_at:%Y-%m-%d %H:%M:%S %Z}")
    if trip.names:
        line += f"  {trip.names}"
    if trip.acknowledged_at is not None:
        line += f"  acknowledged {trip.acknowledged_at:%Y-%m-%d %H:%M:%S %Z}: {trip.acknowledged_note}"
    return line


@click.group()
def trips() -> None:
    """Envelope trips: while any trip is open, sensors and the sweep start nothing."""


@trips.command("list")
@click.option("--all", "show_all", is_flag=True, help="Also list acknowledged trips (newest first).")
@click.option("--limit", default=50, show_default=True, help="At most this many acknowledged trips with --all.")
def list_command(show_all: bool, limit: int) -> None:
    """Open trips (oldest first) with bar, observed value, ceiling, run and time."""
    engine = app_engine()
    with engine.connect() as conn:
        open_ = trip_store.open_trips(conn)
    if open_:
        click.echo(f"{len(open_)} open trip(s): the stream is halted until each is acknowledged")
        for trip in open_:
            click.echo(_line(trip))
    else:
        click.echo("no open envelope trips")
    if show_all:
        with engine.connect() as conn:
            listed = trip_store.list_trips(conn, include_acknowledged=True, limit=limit)
        done = [t for t in listed if t.acknowledged_at is not None]
        click.echo(f"{len(done)} acknowledged trip(s)" + (":" if done else ""))
        for trip in done:
            click.echo(_line(trip))


@trips.command("ack")
@click.argument("trip_id")
@click.option("--note", required=True, help="What was done about the breach (required, not blank).")
def ack_command(trip_id: str, note: str) -> None:
    """Acknowledge TRIP_ID with a note; touches no other trip and starts nothing."""
    engine = app_engine()
    try:
        with engine.begin() as conn:
            trip = trip_store.acknowledge(conn, trip_id.strip(), note)
    except trip_store.TripError as err:
        raise click.ClickException(f"not acknowledged: {err}") from err
    click.echo(f"acknowledged {trip.id} ({trip.bar}) at {trip.acknowledged_at:%Y-%m-%d %H:%M:%S %Z}")
    with engine.connect() as conn:
        remaining = trip_store.open_trips(conn)
    if remaining:
        click.echo(f"{len(remaining)} trip(s) still open; the stream stays halted: "
                   + ", ".join(t.id for t in remaining))
    else:
        click.echo("no open trips: the stream may start runs again")
