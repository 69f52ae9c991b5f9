"""BULK mode: `stage-e run` drives the backlog through micro_batch in-process, recording runs in the instance."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from dagster import DagsterInstance, RunsFilter

from stage_e_dagster.cli import main
from stage_e_dagster.db.slots.holders import list_slot_holders
from testkit.corpus import rendered_scans
from testkit.instance import dagster_home
from testkit.server import scratch_database
from testkit.sql import rows

pytestmark = pytest.mark.slow


@pytest.fixture
def dagster_env(pg_server_url, db_url, dagster_template, tmp_path, monkeypatch):
    """Environment of an operator's shell: app DB, Dagster storage DB and a DAGSTER_HOME with the project's
    instance file."""
    home = dagster_home(tmp_path / "dagster_home")
    with scratch_database(pg_server_url, "dg", template=dagster_template.name) as dagster_url:
        monkeypatch.setenv("STAGE_E_DATABASE_URL", db_url)
        monkeypatch.setenv("STAGE_E_DAGSTER_DATABASE_URL", dagster_url)
        monkeypatch.setenv("DAGSTER_HOME", str(home))
        yield home


def test_run_drains_the_backlog_in_batches_and_records_runs(db_url, tmp_path, dagster_env):
    rendered_scans(db_url, tmp_path, cards=8)
    runner = CliRunner()
    first = runner.invoke(main, ["run", "--batch-size", "3", "--limit", "6"])
    assert first.exit_code == 0, first.output
    assert "2 runs over 6 cards; ledger: 2 completed" in first.output
    workers = rows(db_url, "SELECT counters->'stage_c'->>'workers', counters->'stage_c'->>'workers_reused' "
                           "FROM dispatch_ledger ORDER BY started_at")
    assert workers == [("1", "0"), ("0", "1")], "the run's second batch should reuse the first batch's OCR worker"
    assert list_slot_holders(db_url) == [], "the run's OCR worker should stop, releasing its slot, when it ends"
    rest = runner.invoke(main, ["run"], env={"STAGE_E_BATCH_SIZE": "1"})  # the setting is the default batch size
    assert rest.exit_code == 0 and "2 runs over 2 cards; ledger: 2 completed" in rest.output
    idle = runner.invoke(main, ["run"])
    assert idle.exit_code == 0 and "0 runs over 0 cards" in idle.output
    with DagsterInstance.get() as instance:
        runs = instance.get_runs(RunsFilter(job_name="micro_batch"))
    assert len(runs) == 4 and all(r.tags["stage_e/trigger"] == "bulk" for r in runs)
    assert rows(db_url, "SELECT DISTINCT trigger, mode, status FROM dispatch_ledger") == [("bulk", "bulk", "completed")]
    assert rows(db_url, "SELECT count(*) FROM image_evidence") == [(8,)]


def test_run_refuses_an_open_trip_and_says_how_to_proceed(db_url, db_engine, tmp_path, dagster_env):
    from stage_e_dagster.db.runs import trips

    rendered_scans(db_url, tmp_path, cards=2)
    with db_engine.begin() as conn:
        trip_id = trips.record_trip(conn, "run-x", "host_load", 9.0, 4.0)
    runner = CliRunner()
    refused = runner.invoke(main, ["run"])
    assert refused.exit_code == 1 and trip_id in refused.output
    assert "stage-e trips ack" in refused.output and "--override-trip" in refused.output
    assert runner.invoke(main, ["run", "--mode", "passive", "--override-trip", "x"]).exit_code == 2
    forced = runner.invoke(main, ["run", "--override-trip", "nightly backfill, ops agreed"])
    assert forced.exit_code == 0 and "1 runs over 2 cards; ledger: 1 completed" in forced.output
    assert rows(db_url, "SELECT counters->>'trip_override' FROM dispatch_ledger") == [("nightly backfill, ops agreed",)]
