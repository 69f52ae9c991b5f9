"""`stage-e trips list|ack` and the `acknowledge_envelope_trip` job: the same strict acknowledgement rules."""

from __future__ import annotations

import dagster as dg
import pytest
from click.testing import CliRunner

from stage_e_dagster.commands.trips import trips as trips_cli
from stage_e_dagster.db.core.engine import get_engine
from stage_e_dagster.db.runs import trips
from stage_e_dagster.jobs import acknowledge_envelope_trip
from stage_e_dagster.resources.database import AppDatabase
from testkit.seed import open_trips


@pytest.fixture
def cli(db_url: str):
    runner = CliRunner()

    def invoke(*args: str):
        return runner.invoke(trips_cli, list(args), env={"STAGE_E_DATABASE_URL": db_url})

    return invoke


@pytest.fixture
def three_trips(db_url: str) -> list[str]:
    recorded = []
    for run_id, bar, observed, ceiling, detail in (("run-a", "host_load", 3.25, 1.0, None),
                                                   ("run-b", "rss", 1500.5, 1024.0, {"pid": 4242}),
                                                   ("run-c", "image_failure_rate", 0.04, 0.01, None)):
        with get_engine(db_url).begin() as conn:
            recorded.append(trips.record_trip(conn, run_id, bar, observed, ceiling, detail))
    return recorded


def test_list_shows_open_trips_with_their_numbers(cli, three_trips) -> None:
    a, b, c = three_trips
    result = cli("list")
    assert result.exit_code == 0, result.output
    assert "3 open trip(s)" in result.output
    line_b = next(line for line in result.output.splitlines() if line.startswith(b))
    for part in ("rss", "1500.5", "1024", "run run-b", "tripped "):
        assert part in line_b


def test_ack_reopens_only_that_trip_and_lists_acknowledged_with_all(cli, db_url, three_trips) -> None:
    a, b, c = three_trips
    result = cli("ack", b, "--note", "restarted the leaking worker")
    assert result.exit_code == 0, result.output
    assert f"acknowledged {b}" in result.output and "2 trip(s) still open" in result.output
    assert [t.id for t in open_trips(db_url)] == [a, c]
    listing = cli("list").output
    assert b not in listing and a in listing
    everything = cli("list", "--all").output
    assert "1 acknowledged trip(s)" in everything and "restarted the leaking worker" in everything
    assert everything.index(a) < everything.index(b)  # open first


def test_ack_rules(cli, db_url, db_engine, three_trips) -> None:
    a, b, c = three_trips
    blank = cli("ack", a, "--note", "   ")
    assert blank.exit_code != 0 and "note" in blank.output
    missing_note = cli("ack", a)
    assert missing_note.exit_code != 0 and "--note" in missing_note.output
    unknown = cli("ack", "envtrip-20990101T000000-deadbeef", "--note", "fixed")
    assert unknown.exit_code != 0 and "no envelope trip" in unknown.output
    assert [t.id for t in open_trips(db_url)] == [a, b, c]  # nothing touched
    assert cli("ack", a, "--note", "load fell back").exit_code == 0
    again = cli("ack", a, "--note", "twice")
    assert again.exit_code != 0 and "already acknowledged" in again.output
    with db_engine.connect() as conn:
        (kept,) = [t for t in trips.list_trips(conn) if t.id == a]
    assert kept.acknowledged_note == "load fell back"
    assert [t.id for t in open_trips(db_url)] == [b, c]


def test_list_with_nothing_open(cli) -> None:
    result = cli("list", "--all")
    assert result.exit_code == 0
    assert "no open envelope trips" in result.output and "0 acknowledged trip(s)" in result.output


# -- the Dagster job ------------------------------------------------------------------------------------------
def _ack_job(db_url: str, trip_id: str, note: str) -> dg.ExecuteInProcessResult:
    # In-memory Dagster storage: it cannot matter here, the test reads only this run's own result.
    return acknowledge_envelope_trip.execute_in_process(
        run_config={"ops": {"acknowledge_trip": {"config": {"trip_id": trip_id, "note": note}}}},
        resources={"database": AppDatabase(database_url=db_url)},
        raise_on_error=False,
    )


def _failure_description(result: dg.ExecuteInProcessResult) -> str:
    (event,) = [e for e in result.all_events if e.event_type == dg.DagsterEventType.STEP_FAILURE]
    return event.step_failure_data.user_failure_data.description


def test_acknowledge_job_acknowledges_one_trip(db_url, three_trips) -> None:
    a, b, c = three_trips
    result = _ack_job(db_url, c, "bad batch of uploads quarantined")
    assert result.success
    (output,) = [e for e in result.all_events if e.event_type == dg.DagsterEventType.STEP_OUTPUT]
    assert output.step_output_data.metadata["trip_id"].value == c
    assert [t.id for t in open_trips(db_url)] == [a, b]


def test_acknowledge_job_enforces_the_rules(db_url, three_trips) -> None:
    a, b, c = three_trips
    blank = _ack_job(db_url, a, "  ")
    assert not blank.success and "note" in _failure_description(blank)
    unknown = _ack_job(db_url, "envtrip-nope", "fixed")
    assert not unknown.success and "no envelope trip" in _failure_description(unknown)
    assert _ack_job(db_url, a, "done").success
    again = _ack_job(db_url, a, "done again")
    assert not again.success and "already acknowledged" in _failure_description(again)
    assert [t.id for t in open_trips(db_url)] == [b, c]
