"""The run-failure sensor against runs stored in a real Dagster instance (dagster-postgres with the project's instance
settings, one per test), and its unit cases.

Real failed runs are executed with `execute_in_process` (so they carry no code-location origin, like the
production case `monitor_all_code_locations=True` exists for), then the sensor definition itself is evaluated
tick by tick over the stored RUN_FAILURE events, with its cursor carried between ticks as the daemon does.
"""

# No `from __future__ import annotations`: Dagster reads the test assets' config and resource annotations.
import uuid

import dagster as dg
import pytest
from click.testing import CliRunner
from dagster._core.definitions.run_status_sensor_definition import RunStatusSensorCursor
from dagster._core.definitions.sensor_definition import SensorExecutionData
from dagster._core.events import DagsterEvent, DagsterEventType

from stage_e_dagster.commands.trips import trips as trips_cli
from stage_e_dagster.control.failures import CRASH_REASON, classify_failure
from stage_e_dagster.db.runs import ledger, trips
from stage_e_dagster.job_contracts import BatchSpec
from stage_e_dagster.resources.database import AppDatabase
from stage_e_dagster.resources.envelope import Envelope
from stage_e_dagster.sensors.run_failures import FailureNotRecorded, record_run_failures
from testkit.instance import FailureTicker
from testkit.seed import ledger_row, open_trips


class BatchConfig(dg.Config):
    card_ids: list[int]
    trigger: str = "manual"
    mode: str = "passive"
    force: bool = False


@dg.asset(name="image_evidence")
def envelope_checked(config: BatchConfig, envelope: Envelope) -> None:
    """Stands in for Stage C: checks the envelope at the start, like every asset does."""
    envelope.check(mode=config.mode)


@dg.asset(name="image_evidence")
def exploding(config: BatchConfig) -> None:
    raise RuntimeError(f"catalogue exploded on {len(config.card_ids)} cards")


def _micro_batch(asset: dg.AssetsDefinition, name: str = "micro_batch", **resources: object) -> dg.JobDefinition:
    defs = dg.Definitions(assets=[asset], jobs=[dg.define_asset_job(name)], resources=resources)
    return defs.resolve_job_def(name)


def _run(job: dg.JobDefinition, instance: dg.DagsterInstance, batch: BatchSpec) -> str:
    result = job.execute_in_process(run_config=batch.run_config(), instance=instance, raise_on_error=False)
    assert not result.success
    return result.run_id


def _errors(data: SensorExecutionData) -> list[object]:
    return [r.error for r in data.dagster_run_reactions or [] if r.error]


def test_stored_failures_halt_on_envelope_trips_and_fail_otherwise(instance, db_url: str, db_engine,
                                                                   monkeypatch) -> None:
    monkeypatch.delenv("DAGSTER_RUN_STATUS_SENSOR_PROCESS_LIMIT", raising=False)
    ticker = FailureTicker(instance, db_url)
    assert ticker.tick().skip_message.startswith("Initiating")  # the first tick only records where it starts

    # any process is > 1 MB
    tripping = Envelope(database=AppDatabase(database_url=db_url), host_load_ceiling=1e9, rss_ceiling_mb=1.0)
    envelope_run = _run(_micro_batch(envelope_checked, envelope=tripping), instance,
                        BatchSpec((1, 2, 3), "card-event", "passive"))
    with db_engine.begin() as conn:
        ledger.open_batch(conn, "already-open", "manual", "passive", [9])  # unrelated row stays untouched
    other_job = _run(_micro_batch(exploding, name="some_other_job"), instance, BatchSpec((4,)))
    plain_run = _run(_micro_batch(exploding), instance, BatchSpec((5, 6), "backstop-sweep", "passive"))

    data = ticker.tick()
    assert not _errors(data)
    assert {r.dagster_run.run_id for r in data.dagster_run_reactions} == {envelope_run, other_job, plain_run}

    (trip,) = open_trips(db_url)
    assert (trip.run_id, trip.bar, trip.ceiling) == (envelope_run, "rss", 1.0) and trip.observed > 1.0
    assert trip.detail["step"] == "image_evidence" and trip.detail["cards"] == 3
    halted = ledger_row(db_url, envelope_run)
    assert (halted.status, halted.trigger, halted.card_ids) == ("halted", "card-event", [1, 2, 3])
    assert "envelope tripped" in halted.failure_reason and "rss" in halted.failure_reason
    failed = ledger_row(db_url, plain_run)
    assert (failed.status, failed.trigger, failed.card_ids) == ("failed", "backstop-sweep", [5, 6])
    assert "RuntimeError: catalogue exploded on 2 cards" in failed.failure_reason
    assert ledger_row(db_url, other_job) is None
    assert ledger_row(db_url, "already-open").status == "running"

    assert not ticker.tick().dagster_run_reactions  # the cursor moved past them
    monkeypatch.setenv("DAGSTER_RUN_STATUS_SENSOR_PROCESS_LIMIT", "100")
    ticker.cursor = RunStatusSensorCursor(record_id=-1, update_timestamp=None).to_json()  # re-process every event
    reprocessed = {r.dagster_run.run_id for r in ticker.tick().dagster_run_reactions}
    assert {envelope_run, other_job, plain_run} <= reprocessed
    with db_engine.connect() as conn:
        assert [t.id for t in trips.list_trips(conn)] == [trip.id]  # still exactly one trip for the run
    assert ledger_row(db_url, envelope_run).status == "halted"

    env = {"STAGE_E_DATABASE_URL": db_url}
    acked = CliRunner().invoke(trips_cli, ["ack", trip.id, "--note", "moved the OCR batch off this host"], env=env)
    assert acked.exit_code == 0, acked.output
    assert open_trips(db_url) == []
    again = CliRunner().invoke(trips_cli, ["ack", trip.id, "--note", "again"], env=env)
    assert again.exit_code != 0 and "already acknowledged" in again.output


def test_a_killed_run_marked_failed_by_dagster_is_recorded_as_a_crash(instance, db_url: str) -> None:
    ticker = FailureTicker(instance, db_url)
    ticker.tick()
    job = _micro_batch(exploding)
    run = instance.create_run_for_job(job, run_config=BatchSpec((11, 12), "card-event").run_config())
    instance.report_run_failed(run)  # what the code server does when the run worker dies: no failure data
    assert not _errors(ticker.tick())
    row = ledger_row(db_url, run.run_id)
    assert (row.status, row.failure_reason, row.card_ids, row.trigger) == ("failed", CRASH_REASON, [11, 12],
                                                                          "card-event")
    assert open_trips(db_url) == []


def test_a_burst_is_processed_up_to_the_process_limit_per_tick(instance, db_url: str, monkeypatch) -> None:
    ticker = FailureTicker(instance, db_url)
    ticker.tick()
    job = _micro_batch(exploding)
    runs = [instance.create_run_for_job(job, run_config=BatchSpec((i,)).run_config()) for i in range(7)]
    for run in runs:
        instance.report_run_failed(run)
    monkeypatch.delenv("DAGSTER_RUN_STATUS_SENSOR_PROCESS_LIMIT", raising=False)
    assert len(ticker.tick().dagster_run_reactions) == 5  # Dagster's default
    monkeypatch.setenv("DAGSTER_RUN_STATUS_SENSOR_PROCESS_LIMIT", "100")
    more = [instance.create_run_for_job(job, run_config=BatchSpec((i,)).run_config()) for i in range(20, 26)]
    for run in more:
        instance.report_run_failed(run)
    assert len(ticker.tick().dagster_run_reactions) == 8  # the 2 left over and all 6 new ones
    assert all(ledger_row(db_url, r.run_id).status == "failed" for r in runs + more)


def test_an_unreachable_database_fails_the_tick_and_keeps_the_cursor(instance, db_url: str) -> None:
    ticker = FailureTicker(instance, db_url)
    ticker.tick()
    run = instance.create_run_for_job(_micro_batch(exploding), run_config=BatchSpec((3,)).run_config())
    instance.report_run_failed(run)
    before = ticker.cursor
    with pytest.raises(FailureNotRecorded):
        ticker.tick(db_url="postgresql+psycopg2://nobody:secret@127.0.0.1:1/gone?connect_timeout=2")
    assert ticker.cursor == before
    assert len(ticker.tick().dagster_run_reactions) == 1
    assert ledger_row(db_url, run.run_id).status == "failed"


# -- unit cases with build_run_status_sensor_context ----------------------------------------------------------
def _failure_context(db_url: str, data: object = None, job_name: str = "micro_batch"):
    """A failure handed straight to the sensor function. Storage cannot matter here: the sensor reads only the run
    and the event it is given (the stored-run tests above use production's storage), so an in-memory instance."""
    run = dg.DagsterRun(job_name=job_name, run_id=str(uuid.uuid4()),
                        run_config=BatchSpec((21, 22), "bulk", "bulk").run_config())
    event = DagsterEvent(event_type_value=DagsterEventType.RUN_FAILURE.value, job_name=job_name,
                         message="This run has been marked as failed from outside the execution context.",
                         event_specific_data=data)
    return run, dg.build_run_status_sensor_context(
        sensor_name="record_run_failures", dagster_event=event, dagster_instance=dg.DagsterInstance.ephemeral(),
        dagster_run=run, resources={"database": AppDatabase(database_url=db_url)},
    ).for_run_failure()


def test_crash_without_event_data_marks_the_ledger_failed(db_url: str) -> None:
    run, context = _failure_context(db_url)
    assert classify_failure(context.failure_event).reason == CRASH_REASON
    assert record_run_failures(context) is None
    row = ledger_row(db_url, run.run_id)
    assert (row.status, row.failure_reason, row.mode, row.card_ids) == ("failed", CRASH_REASON, "bulk", [21, 22])


def test_other_jobs_are_ignored(db_url: str) -> None:
    run, context = _failure_context(db_url, job_name="acknowledge_envelope_trip")
    assert record_run_failures(context) is None
    assert ledger_row(db_url, run.run_id) is None
