"""The card stream sensor against a real Postgres and a real Dagster instance, driven tick by tick."""

from __future__ import annotations

from dagster import (
    DagsterInstance,
    DagsterRunStatus,
    DefaultSensorStatus,
    Definitions,
    RunRequest,
    SensorResult,
    SkipReason,
    build_sensor_context,
)
from sqlalchemy import text

from stage_e_dagster.db.runs import ledger, trips
from stage_e_dagster.definitions import build_definitions
from stage_e_dagster.domain.calculators import JOIN_KEY_ID
from stage_e_dagster.domain.evidence.extract import EXTRACTOR_VERSIONS
from stage_e_dagster.domain.work import STAGE_C_ID
from stage_e_dagster.jobs import batch_from_run_config
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


def launched(instance: DagsterInstance, result: SensorResult) -> None:
    """What the daemon does with the requests: each becomes a queued run holding its batch."""
    for batch in requested(result):
        add_runs(instance, DagsterRunStatus.QUEUED, 1, card_ids=batch)


def requested(result: SensorResult | SkipReason) -> list[tuple[int, ...]]:
    assert isinstance(result, SensorResult), result
    return [batch_from_run_config(r.run_config).card_ids for r in result.run_requests]


def flat(batches: list[tuple[int, ...]]) -> list[int]:
    return [i for b in batches for i in b]


# --- scenarios ------------------------------------------------------------------------------------------------


def test_nothing_is_requested_twice_and_new_cards_come_next(db_url, instance):
    first = seed_cards(db_url, 5)
    result = tick(instance, db_url)
    assert requested(result) == [tuple(first)]
    assert [r.run_key for r in tick(instance, db_url).run_requests] == [r.run_key for r in result.run_requests]

    launched(instance, result)
    again = tick(instance, db_url)
    assert isinstance(again, SkipReason) and "no card" in again.skip_message

    later = seed_cards(db_url, 3)
    assert flat(requested(tick(instance, db_url))) == later


def test_cards_are_batched_within_max_runs_per_tick(db_url, instance):
    ids = seed_cards(db_url, 250)
    result = tick(instance, db_url, batch_size=100)
    batches = requested(result)
    assert [len(b) for b in batches] == [100, 100, 50] and flat(batches) == ids
    request: RunRequest = result.run_requests[0]
    assert request.tags == {"stage_e/trigger": "card-event", "stage_e/mode": "passive",
                            "stage_e/batch_size": "100", "stage_e/first_card": str(ids[0]),
                            "stage_e/last_card": str(ids[99])}
    config = batch_from_run_config(request.run_config)
    assert (config.trigger, config.mode, config.force) == ("card-event", "passive", False)

    capped = tick(instance, db_url, batch_size=100, max_runs_per_tick=2)
    assert flat(requested(capped)) == ids[:200]
    launched(instance, capped)
    rest = tick(instance, db_url, max_runs_per_tick=2)
    assert requested(rest) == [tuple(ids[200:])]


def test_run_keys_are_deterministic_and_change_with_the_cards_bytes(db_url, db_engine, instance):
    ids = seed_cards(db_url, 30)
    keys = [r.run_key for r in tick(instance, db_url, batch_size=10).run_requests]
    assert keys == [r.run_key for r in tick(instance, db_url, batch_size=10).run_requests]
    assert len(set(keys)) == 3

    with db_engine.begin() as conn:  # new bytes: the first batch gets a new key
        conn.execute(text("UPDATE card SET content_sha256 = md5('x') WHERE id = :id"), {"id": ids[0]})
    after = [r.run_key for r in tick(instance, db_url, batch_size=10).run_requests]
    assert after[0] != keys[0] and after[1:] == keys[1:]

    with db_engine.begin() as conn:
        ledger.open_batch(conn, "run-1", "card-event", "passive", ids[10:20])  # a batch that ends without its cards
    with db_engine.begin() as conn:
        ledger.mark_failed(conn, "run-1", "failed", "boom")
    retried = [r.run_key for r in tick(instance, db_url, batch_size=10).run_requests]
    assert retried[0] == after[0] and retried[1] != keys[1] and retried[2] == keys[2]


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
    assert len(flat(requested(tick(instance, db_url)))) == 3


def test_backpressure_skips_a_full_queue_and_fills_only_the_room_left(db_url, instance):
    seed_cards(db_url, 100)
    add_runs(instance, DagsterRunStatus.QUEUED, 4)
    add_runs(instance, DagsterRunStatus.NOT_STARTED, 1)
    add_runs(instance, DagsterRunStatus.STARTING, 1)
    add_runs(instance, DagsterRunStatus.STARTED, 5)  # running, not waiting
    add_runs(instance, DagsterRunStatus.QUEUED, 5, job="other_job")
    partial = tick(instance, db_url, batch_size=10)
    assert len(partial.run_requests) == 2  # 8 - 6 waiting, below max_runs_per_tick=4

    add_runs(instance, DagsterRunStatus.QUEUED, 2)
    full = tick(instance, db_url, batch_size=10)
    assert isinstance(full, SkipReason)
    assert "backpressure" in full.skip_message and "8" in full.skip_message


def test_stale_bytes_reopen_a_finished_card(db_url, instance):
    pending, done = seed_cards(db_url, 2)
    add_evidence(db_url, done)
    mark_decided(db_url, done)
    first = tick(instance, db_url)
    assert flat(requested(first)) == [pending]

    launched(instance, first)
    reingest(db_url, done)
    assert flat(requested(tick(instance, db_url))) == [done]


def test_what_needs_work_follows_the_shared_definition(db_url, db_engine, instance):
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
    assert flat(requested(tick(instance, db_url))) == [fresh, no_outcome, no_evidence_skip, c_skipped_old, stale]


def test_cards_in_a_running_ledger_batch_are_excluded(db_url, db_engine, instance):
    ids = seed_cards(db_url, 6)
    with db_engine.begin() as conn:
        ledger.open_batch(conn, "run-busy", "card-event", "passive", ids[:3])
    with db_engine.begin() as conn:
        ledger.open_batch(conn, "run-done", "card-event", "passive", ids[3:4])
    with db_engine.begin() as conn:
        ledger.close(conn, "run-done", "completed")
    assert flat(requested(tick(instance, db_url))) == ids[3:]


def test_cards_of_halted_failed_and_throttled_batches_come_back_with_a_growing_wait(db_url, db_engine, instance):
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
    assert flat(requested(tick(instance, db_url))) == ids[:2]
    with db_engine.begin() as conn:
        ledger.open_batch(conn, "run-f2", "card-event", "passive", [ids[1]])
    with db_engine.begin() as conn:
        ledger.mark_failed(conn, "run-f2", "failed", "again")
    assert flat(requested(tick(instance, db_url))) == ids[:1]  # a card that failed twice now waits
    with db_engine.connect() as conn:
        rows = conn.execute(text("SELECT card_id, attempts, retry_at > now() FROM card_work ORDER BY card_id")).all()
    assert [tuple(r) for r in rows] == [(ids[0], 1, False), (ids[1], 2, True), (ids[2], 1, True)]


def test_a_silent_running_batch_is_reclaimed_and_its_cards_offered_again(db_url, db_engine, instance):
    ids = seed_cards(db_url, 4)
    with db_engine.begin() as conn:
        ledger.open_batch(conn, "run-dead", "card-event", "passive", ids[:2])
    with db_engine.begin() as conn:
        ledger.open_batch(conn, "run-alive", "card-event", "passive", ids[2:])
    assert isinstance(tick(instance, db_url), SkipReason)
    with db_engine.begin() as conn:
        conn.execute(text("UPDATE dispatch_ledger SET heartbeat_at = now() - interval '10 minutes' "
                          "WHERE run_id = 'run-dead'"))
    assert flat(requested(tick(instance, db_url, reclaim_after_seconds=300))) == ids[:2]
    dead = ledger_row(db_url, "run-dead")
    assert dead.status == "failed" and dead.failure_reason.startswith("abandoned: no heartbeat since")
    assert ledger_row(db_url, "run-alive").status == "running"


def test_sensor_and_schedule_load_in_definitions():
    defs = build_definitions(Settings())
    Definitions.validate_loadable(defs)
    repo = defs.get_repository_def()
    sensor_def, schedule_def = repo.get_sensor_def("card_stream"), repo.get_schedule_def("backstop_sweep")
    assert sensor_def.minimum_interval_seconds == 15 and sensor_def.default_status == DefaultSensorStatus.RUNNING
    assert sensor_def.job_name == "micro_batch" and schedule_def.job_name == "micro_batch"
    assert (schedule_def.cron_schedule, schedule_def.execution_timezone) == ("*/30 * * * *", "UTC")


def test_cards_in_a_queued_run_are_not_requested_again(db_url, instance):
    ids = seed_cards(db_url, 6)
    add_runs(instance, DagsterRunStatus.QUEUED, 1, card_ids=tuple(ids[:2]))
    add_runs(instance, DagsterRunStatus.STARTED, 1, card_ids=tuple(ids[2:3]))
    add_runs(instance, DagsterRunStatus.FAILURE, 1, card_ids=tuple(ids[3:4]))
    assert flat(requested(tick(instance, db_url))) == ids[3:]
