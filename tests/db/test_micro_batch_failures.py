"""The real `micro_batch` job when things go wrong: throttling, an envelope breach, and a SIGKILL mid Stage C."""

import multiprocessing as mp
import os
import signal
import time

import dagster as dg
import pytest

from stage_e_dagster.control import reaper, run_queue
from stage_e_dagster.db.runs import trips
from stage_e_dagster.db.slots.holders import list_slot_holders
from stage_e_dagster.db.work.queue import cards_needing_work
from stage_e_dagster.job_contracts import BatchSpec
from stage_e_dagster.resources.database import AppDatabase
from stage_e_dagster.resources.envelope import Envelope
from stage_e_dagster.resources.ocr_slots import OcrSlots
from stage_e_dagster.resources.stream import StreamControl
from stage_e_dagster.sensors.card_stream import card_stream
from testkit.corpus import card_ids, rendered_scans
from testkit.instance import FailureTicker, postgres_instance
from testkit.jobs import micro_batch_job, resources
from testkit.live import wait_for
from testkit.oracle import assert_nothing_twice
from testkit.seed import ledger_row, open_trips
from testkit.sql import rows

pytestmark = pytest.mark.slow


@pytest.fixture
def batch(db_url, tmp_path) -> BatchSpec:
    rendered_scans(db_url, tmp_path, cards=6)
    return BatchSpec(tuple(sorted(card_ids(db_url).values())), trigger="card-event", mode="passive")


def _stream_tick(instance, db_url):
    res = {"database": resources(db_url)["database"], "stream": StreamControl(batch_size=10)}
    with dg.build_sensor_context(instance=instance, resources=res) as ctx:
        return card_stream(ctx)


def test_no_free_slot_retries_then_closes_the_batch_throttled(db_url, batch, instance):
    job = micro_batch_job(db_url)
    with OcrSlots(database=AppDatabase(database_url=db_url), max_slots=2).acquire(2) as held:
        assert held == [0, 1]
        result = job.execute_in_process(run_config=batch.run_config(), instance=instance)
    assert result.success
    skipped = {e.step_key for e in result.all_events if e.event_type_value == "STEP_SKIPPED"}
    assert skipped == {"printing_votes", "dispatch_outcome"}
    row = ledger_row(db_url, result.run_id)
    assert row.status == "throttled" and "no OCR slot" in row.failure_reason
    assert rows(db_url, "SELECT count(*) FROM image_evidence") == [(0,)]
    retries = [e for e in result.all_events if e.event_type_value == "STEP_UP_FOR_RETRY"]
    assert len(retries) == 1


def test_envelope_breach_halts_the_stream_until_acknowledged(db_url, db_engine, batch, instance):
    ticker = FailureTicker(instance, db_url)
    ticker.tick()
    tripping = Envelope(database=AppDatabase(database_url=db_url), host_load_ceiling=1e9, rss_ceiling_mb=1.0)
    result = micro_batch_job(db_url, envelope=tripping).execute_in_process(
        run_config=batch.run_config(), instance=instance, raise_on_error=False)
    assert not result.success
    # The run recorded its trip at the breach, before any sensor tick: a run queued behind it halts at its gate
    # without tripping again.
    (trip,) = open_trips(db_url)
    assert trip.run_id == result.run_id and trip.bar == "rss" and trip.detail["recorded_by"] == "run"
    assert trip.detail["step"] == "image_evidence" and trip.detail["cards"] == 6
    queued = micro_batch_job(db_url, envelope=tripping).execute_in_process(
        run_config=batch.run_config(), instance=instance, raise_on_error=False)
    assert queued.success and ledger_row(db_url, queued.run_id).status == "halted"
    assert trip.id in ledger_row(db_url, queued.run_id).failure_reason
    ticker.tick()
    ticker.tick()
    assert [t.id for t in open_trips(db_url)] == [trip.id], "one trip for the run that tripped, no more"
    assert ledger_row(db_url, result.run_id).status == "halted"
    assert rows(db_url, "SELECT count(*) FROM image_evidence") == [(0,)]
    halted = _stream_tick(instance, db_url)
    assert isinstance(halted, dg.SkipReason) and trip.id in halted.skip_message
    with db_engine.begin() as conn:
        trips.acknowledge(conn, trip.id, "raised the memory ceiling")
    reopened = _stream_tick(instance, db_url)
    assert [r.job_name for r in reopened.run_requests] == ["stream_drain"], "the acknowledgement reopens the stream"
    with db_engine.connect() as conn:
        assert len(cards_needing_work(conn, 100)) == 6, "the halted cards are offered again at once"


def _execute(db_url: str, dagster_url: str, spec: BatchSpec) -> None:
    with postgres_instance(dagster_url) as instance:
        micro_batch_job(db_url).execute_in_process(run_config=spec.run_config(), instance=instance)


def test_sigkill_mid_stage_c_never_leaves_completed_the_row_is_reclaimed_and_its_cards_come_back(
        db_url, db_engine, dagster_template, tmp_path):
    """An in-process run (as `stage-e run` executes them) killed mid Stage C, on production's Dagster storage:
    Dagster keeps calling it STARTED, so the reaper reclaims the ledger row and fails the Dagster run too, and its
    cards come back."""
    rendered_scans(db_url, tmp_path, cards=24)
    spec = BatchSpec(tuple(sorted(card_ids(db_url).values())), trigger="card-event", mode="passive")
    with dagster_template.storage() as dagster_url, postgres_instance(dagster_url) as instance:
        child = mp.get_context("spawn").Process(target=_execute, args=(db_url, dagster_url, spec))
        child.start()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and rows(db_url, "SELECT count(*) FROM image_evidence")[0][0] < 2:
            time.sleep(0.02)
        assert list_slot_holders(db_url), "Stage C never started"
        os.kill(child.pid, signal.SIGKILL)
        child.join(timeout=10)
        (killed,) = rows(db_url, "SELECT run_id, status FROM dispatch_ledger")
        assert killed[1] == "running"
        assert instance.get_run_by_id(killed[0]).status == dg.DagsterRunStatus.STARTED, "nothing in Dagster saw it"
        wait_for(lambda: list_slot_holders(db_url) == [], 60, "the killed run's OCR slots to be free", poll=0.1)
        # The reaper (a stream tick, `stage-e status`, the next `stage-e run`) sees the run's process is gone.
        (reclaimed,) = reaper.reclaim_dead_batches(instance, db_engine, 300)
        assert reclaimed.run_id == killed[0] and reclaimed.status == "failed"
        assert "is gone" in reclaimed.failure_reason
        assert instance.get_run_by_id(killed[0]).status == dg.DagsterRunStatus.FAILURE, "it holds no queue place"
        unfinished = {row[0] for row in rows(db_url, "SELECT c.id FROM card c WHERE NOT EXISTS "
                                                     "(SELECT 1 FROM image_evidence e WHERE e.card_id = c.id)")}
        busy = run_queue.busy_card_ids(instance, db_engine)
        with db_engine.connect() as conn:
            offered = {card.id for card in cards_needing_work(conn, 100, busy)}
        assert unfinished and unfinished <= offered  # offered again at once (their first retry has no wait)
        rerun = micro_batch_job(db_url).execute_in_process(
            run_config=BatchSpec(tuple(sorted(offered)), "card-event", "passive").run_config(), instance=instance)
    assert rerun.success
    assert ledger_row(db_url, rerun.run_id).status == "completed"
    with db_engine.connect() as conn:
        assert cards_needing_work(conn, 100) == []
    assert rows(db_url, "SELECT count(*) FROM image_evidence") == [(24,)]
    assert_nothing_twice(db_url)
