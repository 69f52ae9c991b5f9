"""`stage-e dev`: `dg dev` (UI, daemon, sensors, schedules) on this project's Postgres, stopped by one key.

`dg dev` (Dagster's current development command; `dagster dev` is superseded by it and runs the same code) is
started with the project's `workspace.yaml`, so it loads the code location in this virtualenv and needs no `uv`. It
runs as a supervised child in its own process group (`supervise.Supervised`). Ctrl-C (or SIGTERM,
SIGHUP) stops the whole group in order, a second Ctrl-C stops it at once; any process of the tree still running
afterwards is ended, and runs whose workers had to be ended are marked failed so they hold no queue slot. Then the
embedded Postgres is stopped if this command started it (or `--stop-postgres` says its caller did); a server that was
running before is left running. The data stays under `$STAGE_E_HOME`, so the next `stage-e dev` (or `make demo`)
carries on where this one stopped.

With `--feed SCANS --feed-into INBOX`, a background thread copies scans into a registered source directory in waves
while Dagster runs (the demo's inbox); it stops with the command.
"""

from __future__ import annotations

import signal
import sys
import time
from pathlib import Path

import click

from stage_e_dagster.commands import app_url, settings
from stage_e_dagster.postgres.server import PostgresStartError

POLL_SECONDS = 0.5


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=3000, show_default=True, type=int)
@click.option("--feed", "feed_from", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Copy the scans under this directory into --feed-into in waves while Dagster runs.")
@click.option("--feed-into", type=click.Path(file_okay=False, path_type=Path),
              help="The (registered) source directory the scans are fed into.")
@click.option("--feed-wave", type=click.IntRange(min=1), default=50, show_default=True, help="Scans per wave.")
@click.option("--feed-every", type=click.FloatRange(min=0), default=20.0, show_default=True,
              help="Seconds between waves.")
@click.option("--stop-grace", type=click.FloatRange(min=0), default=30.0, show_default=True,
              help="Seconds Dagster gets to shut down after Ctrl-C before it is ended.")
@click.option("--stop-postgres", is_flag=True,
              help="On exit, stop the embedded Postgres even if it was running when this command started (for a "
                   "caller that started it for this session, as `make demo` does for its setup steps).")
def dev(host: str, port: int, feed_from: Path | None, feed_into: Path | None, feed_wave: int, feed_every: float,
        stop_grace: float, stop_postgres: bool) -> None:
    """Run `dg dev` (UI, daemon, card stream, source inbox, sweep) against this project's Postgres; Ctrl-C
    stops it, its processes and the embedded Postgres it started."""
    from stage_e_dagster.postgres.locate import embedded_server
    from stage_e_dagster.runtime import PROJECT_ROOT, prepare_dagster_environment
    from stage_e_dagster.supervise import Supervised

    if (feed_from is None) != (feed_into is None):
        raise click.UsageError("--feed and --feed-into go together")
    config = settings()
    embedded = not (config.database_url and config.dagster_database_url)
    server = embedded_server(config)
    owns_server = embedded and (stop_postgres or not server.status().running)
    stops: list[int] = []

    def request_stop(signum: int, _frame: object) -> None:
        stops.append(signum)

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, request_stop)
    child = Supervised([sys.executable, "-m", "dagster_dg_cli.cli", "dev", "-w", str(PROJECT_ROOT / "workspace.yaml"),
                        "-h", host, "-p", str(port)], cwd=PROJECT_ROOT, grace=stop_grace)
    feeder = None
    code = 1
    session_start = time.time()
    try:
        try:
            prepare_dagster_environment(config)
            app_url()  # the schema at head before Dagster starts
        except PostgresStartError as err:
            raise click.ClickException(str(err)) from err
        if not stops:
            leaves = "stops Dagster and the embedded Postgres" if owns_server else \
                "stops Dagster; the database keeps running (it was running before)" if embedded else \
                "stops Dagster; the database is not this command's to stop"
            click.echo(f"Dagster UI on http://{host}:{port} (Ctrl-C {leaves})")
            child.start()
            if feed_from is not None and feed_into is not None:
                from stage_e_dagster.demo.feed import Feeder

                feeder = Feeder(feed_from, feed_into, wave=feed_wave, every=feed_every,
                                say=lambda message: click.echo(message, err=True))
                feeder.start()
            code = _supervise(child, stops)
    finally:
        if feeder is not None:
            feeder.stop()
        _clean_up(child, session_start)
        if owns_server and server.status().running:
            click.echo("stopping the embedded Postgres this command started", err=True)
            server.stop()
    if stops:
        click.echo(f"stopped ({signal.Signals(stops[0]).name})", err=True)
        raise SystemExit(0)
    raise SystemExit(code)


def _supervise(child, stops: list[int]) -> int:
    """Wait for `dg dev` to exit; the first stop signal asks the group to stop, a second one ends it."""
    handled = 0
    while True:
        code = child.poll()
        if code is not None:
            return code
        if len(stops) > handled:
            handled = len(stops)
            if handled == 1:
                click.echo("stopping Dagster (Ctrl-C again to stop it at once)", err=True)
                child.stop()
            else:
                child.kill()
        time.sleep(POLL_SECONDS)


def _clean_up(child, session_start: float) -> None:
    """End whatever of the tree is still running, and mark failed the runs it left unfinished."""
    if child.proc is None:
        return
    if child.proc.poll() is None:
        child.kill()
        child.proc.wait()
    ended = child.finish()
    if ended:
        click.echo(f"ended {len(ended)} process(es) Dagster left behind: " + ", ".join(map(str, ended)), err=True)
    _fail_orphaned_runs(session_start)


def _fail_orphaned_runs(session_start: float) -> None:
    """Runs this session's Dagster launched (they have a code-location origin, unlike `stage-e run`'s in-process
    runs) that still say started are dead now that every process of the session ended: mark them failed, so they
    free their queue slot, and the run-failure sensor records them in the ledger at the next start. (A run worker
    that got the Ctrl-C marks its own run failed; this covers one that had to be killed.)"""
    try:
        from datetime import UTC, datetime

        from dagster import DagsterInstance, DagsterRunStatus, RunsFilter

        unfinished = [DagsterRunStatus.STARTED, DagsterRunStatus.STARTING, DagsterRunStatus.CANCELING]
        since = datetime.fromtimestamp(session_start, UTC)
        with DagsterInstance.get() as instance:
            for run in instance.get_runs(RunsFilter(statuses=unfinished, created_after=since)):
                if run.remote_job_origin is None:
                    continue
                instance.report_run_failed(run, "stage-e dev stopped while this run was going; its process ended")
                click.echo(f"run {run.run_id} was going when Dagster stopped: marked failed", err=True)
    except Exception as err:  # noqa: BLE001 - best effort: run monitoring's max runtime still ends such runs
        click.echo(f"could not check for unfinished runs ({type(err).__name__})", err=True)
