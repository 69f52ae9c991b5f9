"""The real `micro_batch` job when things go wrong: throttling, an envelope breach, and a SIGKILL mid Stage C."""

import multiprocessing as mp
import os
import signal
import time

import dagster as dg
import pytest

from stage_e_dagster.db.runs import ledger, trips
from stage_e_dagster.db.slots.holders import list_slot_holders
from stage_e_dagster.db.work.queue import cards_needing_work
from stage_e_dagster.jobs import BatchSpec
from stage_e_dagster.resources.database import AppDatabase
from stage_e_dagster.resources.envelope import Envelope
from stage_e_dagster.resources.ocr_slots import OcrSlots
from stage_e_dagster.resources.stream import StreamControl
from stage_e_dagster.sensors.card_stream import card_stream
from tests.e2e_helpers import micro_batch_job, resources
from tests.stage_c_helpers import card_ids, rows, seed_scans
from tests.stream_helpers import ledger_row, open_trips
from tests.test_run_failures import Ticker

pytestmark = pytest.mark.slow


@pytest.fixture
def batch(db_url, tmp_path) -> BatchSpec:
    seed_scans(db_url, tmp_path, cards=6)
    return BatchSpec(tuple(sorted(card_ids(db_url).values())), trigger="card-event", mode="passive")


def _stream_tick(instance, db_url):
    res = {"database": resources(db_url)["database"], "stream": StreamControl(batch_size=10)}
    with dg.build_sensor_context(instance=instance, resources=res) as ctx:
        return card_stream(ctx)


def test_no_free_slot_retries_then_closes_the_batch_throttled(db_url, batch):
    job = micro_batch_job(db_url)
    with OcrSlots(database=AppDatabase(database_url=db_url), max_slots=2).acquire(2) as held:
        assert held == [0, 1]
        result = job.execute_in_process(run_config=batch.run_config(), instance=dg.DagsterInstance.ephemeral())
    assert result.success
    skipped = {e.step_key for e in result.all_events if e.event_type_value == "STEP_SKIPPED"}
    assert skipped == {"printing_votes", "dispatch_outcome"}
    row = ledger_row(db_url, result.run_id)
    assert row.status == "throttled" and "no OCR slot" in row.failure_reason
    assert rows(db_url, "SELECT count(*) FROM image_evidence") == [(0,)]
    retries = [e for e in result.all_events if e.event_type_value == "STEP_UP_FOR_RETRY"]
    assert len(retries) == 1


def test_envelope_breach_halts_the_stream_until_acknowledged(db_url, db_engine, batch, pg_dagster_instance):
    instance = pg_dagster_instance
    ticker = Ticker(instance, db_url)
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


def _execute(db_url: str, spec: BatchSpec) -> None:
    micro_batch_job(db_url).execute_in_process(run_config=spec.run_config(),
                                               instance=dg.DagsterInstance.ephemeral())


def test_sigkill_mid_stage_c_never_leaves_completed_the_row_is_reclaimed_and_its_cards_come_back(
        db_url, db_engine, tmp_path):
    seed_scans(db_url, tmp_path, cards=24)
    spec = BatchSpec(tuple(sorted(card_ids(db_url).values())), trigger="card-event", mode="passive")
    child = mp.get_context("spawn").Process(target=_execute, args=(db_url, spec))
    child.start()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and rows(db_url, "SELECT count(*) FROM image_evidence")[0][0] < 2:
        time.sleep(0.02)
    assert list_slot_holders(db_url), "Stage C never started"
    os.kill(child.pid, signal.SIGKILL)
    child.join(timeout=10)
    (killed,) = rows(db_url, "SELECT run_id, status FROM dispatch_ledger")
    assert killed[1] == "running"
    time.sleep(2)
    assert list_slot_holders(db_url) == []
    # The reaper (a stream tick, `stage-e status`, the next `stage-e run`) sees the run's process is gone.
    with db_engine.begin() as conn:
        (reclaimed,) = ledger.reap(conn, max_age_seconds=300)
    assert reclaimed.run_id == killed[0] and reclaimed.status == "failed"
    assert "is gone" in reclaimed.failure_reason
    unfinished = {row[0] for row in rows(db_url, "SELECT c.id FROM card c WHERE NOT EXISTS "
                                                 "(SELECT 1 FROM image_evidence e WHERE e.card_id = c.id)")}
    with db_engine.connect() as conn:
        offered = {card.id for card in cards_needing_work(conn, 100)}
    assert unfinished and unfinished <= offered  # offered again at once (their first retry has no wait)
    rerun = micro_batch_job(db_url).execute_in_process(
        run_config=BatchSpec(tuple(sorted(offered)), "card-event", "passive").run_config(),
        instance=dg.DagsterInstance.ephemeral())
    assert rerun.success
    assert ledger_row(db_url, rerun.run_id).status == "completed"
    with db_engine.connect() as conn:
        assert cards_needing_work(conn, 100) == []
    assert rows(db_url, "SELECT count(*), count(DISTINCT card_id) FROM image_evidence") == [(24, 24)]
    assert rows(db_url, "SELECT count(*) FROM (SELECT card_id, anonymous_id, printing_id FROM card_printing_tag "
                        "GROUP BY 1, 2, 3 HAVING count(*) > 1) d") == [(0,)]
