"""The card stream sensor against a real Postgres and a real Dagster instance, driven tick by tick: it starts a
draining run whenever cards are owed and none is going, names what stops it, and reclaims dead batches. What a
draining run then takes (the offered cards) is the work queue's, checked here through `cards_needing_work` and a
claim, the way a draining run and a bulk run take cards."""

from __future__ import annotations

from dagster import (
    DagsterInstance,
    DagsterRunStatus,
    DefaultSensorStatus,
    Definitions,
    SensorResult,
    SkipReason,
    build_sensor_context,
)
from sqlalchemy import text

from stage_e_dagster.db.runs import ledger, trips
from stage_e_dagster.db.work.queue import cards_needing_work
from stage_e_dagster.definitions import build_definitions
from stage_e_dagster.domain.calculators import JOIN_KEY_ID
from stage_e_dagster.domain.evidence.extract import EXTRACTOR_VERSIONS
from stage_e_dagster.domain.work import STAGE_C_ID
from stage_e_dagster.job_contracts import STREAM_DRAIN
from stage_e_dagster.resources.database import AppDatabase
from stage_e_dagster.resources.stream import StreamControl
from stage_e_dagster.sensors.card_stream import card_stream
from stage_e_dagster.settings import Settings
from testkit.instance import add_runs
from testkit.seed import (
    add_evidence,
    add_scan_log,
    ledger_row,
    mark_decided,
    reingest,
    seed_cards,
)


def tick(instance: DagsterInstance, url: str, **control) -> SensorResult | SkipReason:
    resources = {"database": AppDatabase(database_url=url), "stream": StreamControl(**control)}
    with build_sensor_context(instance=instance, resources=resources) as ctx:
        return card_stream(ctx)


def drains(result: SensorResult | SkipReason) -> int:
    """How many draining runs the tick requested (0 for a skip)."""
    if isinstance(result, SkipReason):
        return 0
    assert all(r.job_name == STREAM_DRAIN for r in result.run_requests)
    return len(result.run_requests)


def offered(db_engine) -> list[int]:
    with db_engine.connect() as conn:
        return [card.id for card in cards_needing_work(conn, 1000)]


# --- scenarios ------------------------------------------------------------------------------------------------


def test_owed_cards_start_one_draining_run_and_a_going_one_is_left_to_take_them(db_url, instance):
    idle = tick(instance, db_url)
    assert isinstance(idle, SkipReason) and "no card" in idle.skip_message
    seed_cards(db_url, 5)
    assert drains(tick(instance, db_url)) == 1
    add_runs(instance, DagsterRunStatus.QUEUED, 1, job=STREAM_DRAIN)  # what the daemon makes of the request
    going = tick(instance, db_url)
    assert isinstance(going, SkipReason) and "1 draining run(s) take the owed cards" in going.skip_message
    add_runs(instance, DagsterRunStatus.STARTED, 1, job=STREAM_DRAIN)
    assert drains(tick(instance, db_url, drain_runs=3)) == 1, "up to STAGE_E_DRAIN_RUNS going at once"


def test_draining_runs_that_ended_do_not_count(db_url, instance):
    seed_cards(db_url, 2)
    add_runs(instance, DagsterRunStatus.SUCCESS, 1, job=STREAM_DRAIN)
    add_runs(instance, DagsterRunStatus.FAILURE, 1, job=STREAM_DRAIN)
    assert drains(tick(instance, db_url)) == 1


def test_skip_when_disabled(db_url, instance):
    seed_cards(db_url, 3)
    result = tick(instance, db_url, enabled=False)
    assert isinstance(result, SkipReason) and "disabled" in result.skip_message


def test_one_open_trip_halts_the_stream_and_is_named(db_url, db_engine, instance):
    seed_cards(db_url, 3)
    with db_engine.begin() as conn:
        trip_id = trips.record_trip(conn, "run-x", "host_load", 12.0, 7.0)
    result = tick(instance, db_url)
    assert isinstance(result, SkipReason) and trip_id in result.skip_message
    with db_engine.begin() as conn:
        trips.acknowledge(conn, trip_id, "load back to normal")
    assert drains(tick(instance, db_url)) == 1


def test_stale_bytes_reopen_a_finished_card(db_url, db_engine):
    pending, done = seed_cards(db_url, 2)
    add_evidence(db_url, done)
    mark_decided(db_url, done)
    assert offered(db_engine) == [pending]
    with db_engine.begin() as conn:
        ledger.claim_batch(conn, "run-1", "card-event", "passive", 10)
    assert offered(db_engine) == []
    reingest(db_url, done)
    assert offered(db_engine) == [done]


def test_what_needs_work_follows_the_shared_definition(db_url, db_engine):
    ids = seed_cards(db_url, 9)
    fresh, no_outcome, voted, abstained, no_evidence_skip, c_skipped, c_skipped_old, stale, gone = ids
    add_evidence(db_url, no_outcome)
    add_evidence(db_url, voted)
    mark_decided(db_url, voted)
    add_evidence(db_url, abstained)
    mark_decided(db_url, abstained)
    add_evidence(db_url, no_evidence_skip)
    add_scan_log(db_url, no_evidence_skip, JOIN_KEY_ID, "no-evidence")
    add_scan_log(db_url, c_skipped, STAGE_C_ID, "unreadable-image")
    add_scan_log(db_url, c_skipped_old, STAGE_C_ID, "unreadable-image", for_current_bytes=False)
    add_evidence(db_url, stale, {**EXTRACTOR_VERSIONS, "collector": "collector-v0"})
    with db_engine.begin() as conn:
        conn.execute(text("UPDATE card SET missing_since = now() WHERE id = :id"), {"id": gone})
    assert offered(db_engine) == [fresh, no_outcome, no_evidence_skip, c_skipped_old, stale]


def test_cards_in_a_running_ledger_batch_are_excluded(db_url, db_engine):
    ids = seed_cards(db_url, 6)
    with db_engine.begin() as conn:
        ledger.open_batch(conn, "run-busy", "card-event", "passive", ids[:3])
    with db_engine.begin() as conn:
        ledger.open_batch(conn, "run-done", "card-event", "passive", ids[3:4])
    with db_engine.begin() as conn:
        ledger.close(conn, "run-done", "completed")
    assert offered(db_engine) == ids[3:]


def test_cards_of_halted_failed_and_throttled_batches_come_back_with_a_growing_wait(db_url, db_engine):
    ids = seed_cards(db_url, 3)
    for run_id, card, status in (("run-h", ids[0], "halted"), ("run-f", ids[1], "failed"), ("run-t", ids[2], "x")):
        with db_engine.begin() as conn:
            ledger.open_batch(conn, run_id, "card-event", "passive", [card])
        if status == "x":
            with db_engine.begin() as conn:
                ledger.close(conn, run_id, "throttled", reason="no slot")
        else:
            with db_engine.begin() as conn:
                ledger.mark_failed(conn, run_id, status, "why")
    with db_engine.begin() as conn:
        ledger.mark_failed(conn, "run-f", "failed", "the failure event, processed twice")
    # First time round a halted or failed card is offered at once; a throttled one waits a little.
    assert offered(db_engine) == ids[:2]
    with db_engine.begin() as conn:
        ledger.open_batch(conn, "run-f2", "card-event", "passive", [ids[1]])
    with db_engine.begin() as conn:
        ledger.mark_failed(conn, "run-f2", "failed", "again")
    assert offered(db_engine) == ids[:1]  # a card that failed twice now waits
    with db_engine.connect() as conn:
        rows = conn.execute(text("SELECT card_id, attempts, retry_at > now() FROM card_work ORDER BY card_id")).all()
    assert [tuple(r) for r in rows] == [(ids[0], 1, False), (ids[1], 2, True), (ids[2], 1, True)]


def test_a_silent_running_batch_is_reclaimed_and_its_cards_offered_again(db_url, db_engine, instance):
    ids = seed_cards(db_url, 4)
    with db_engine.begin() as conn:
        ledger.open_batch(conn, "run-dead", "card-event", "passive", ids[:2])
    with db_engine.begin() as conn:
        ledger.open_batch(conn, "run-alive", "card-event", "passive", ids[2:])
    assert isinstance(tick(instance, db_url), SkipReason), "every card is in a live batch"
    with db_engine.begin() as conn:
        conn.execute(text("UPDATE dispatch_ledger SET heartbeat_at = now() - interval '10 minutes' "
                          "WHERE run_id = 'run-dead'"))
    assert drains(tick(instance, db_url, reclaim_after_seconds=300)) == 1
    assert offered(db_engine) == ids[:2]
    dead = ledger_row(db_url, "run-dead")
    assert dead.status == "failed" and dead.failure_reason.startswith("abandoned: no heartbeat since")
    assert ledger_row(db_url, "run-alive").status == "running"


def test_sensor_and_schedule_load_in_definitions():
    defs = build_definitions(Settings())
    Definitions.validate_loadable(defs)
    repo = defs.get_repository_def()
    sensor_def, schedule_def = repo.get_sensor_def("card_stream"), repo.get_schedule_def("backstop_sweep")
    assert sensor_def.minimum_interval_seconds == Settings.stream_interval_seconds
    assert sensor_def.default_status == DefaultSensorStatus.RUNNING
    assert sensor_def.job_name == STREAM_DRAIN and schedule_def.job_name == "micro_batch"
    assert (schedule_def.cron_schedule, schedule_def.execution_timezone) == ("*/30 * * * *", "UTC")


def test_a_claim_leaves_out_the_cards_of_queued_and_started_runs(db_url, db_engine, instance):
    from stage_e_dagster.control.run_queue import busy_card_ids

    ids = seed_cards(db_url, 6)
    add_runs(instance, DagsterRunStatus.QUEUED, 1, card_ids=tuple(ids[:2]))
    add_runs(instance, DagsterRunStatus.STARTED, 1, card_ids=tuple(ids[2:3]))
    add_runs(instance, DagsterRunStatus.FAILURE, 1, card_ids=tuple(ids[3:4]))
    with db_engine.begin() as conn:
        taken = ledger.claim_batch(conn, "run-d", "card-event", "passive", 10, busy=busy_card_ids(instance, db_engine))
    assert [card.id for card in taken] == ids[3:]
