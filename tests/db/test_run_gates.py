"""Gates at every run start: a run that finds an open trip or streaming switched off stops before any work."""

from __future__ import annotations

import dagster as dg
import pytest

from stage_e_dagster.db.runs import trips
from stage_e_dagster.job_contracts import BatchSpec
from stage_e_dagster.resources.stream import StreamControl
from testkit.corpus import card_ids, rendered_scans
from testkit.jobs import micro_batch_job
from testkit.seed import ledger_row, open_trips
from testkit.sql import rows

pytestmark = pytest.mark.slow


@pytest.fixture
def cards(db_url, tmp_path) -> tuple[int, ...]:
    rendered_scans(db_url, tmp_path, cards=3)
    return tuple(sorted(card_ids(db_url).values()))


def _run(instance, db_url, spec: BatchSpec, **resources) -> dg.ExecuteInProcessResult:
    return micro_batch_job(db_url, **resources).execute_in_process(run_config=spec.run_config(), instance=instance)


def _trip(engine, run_id: str, bar: str, observed: float, ceiling: float) -> str | None:
    with engine.begin() as conn:
        return trips.record_trip(conn, run_id, bar, observed, ceiling)


def _skipped(result: dg.ExecuteInProcessResult) -> set[str]:
    return {e.step_key for e in result.all_events if e.event_type_value == "STEP_SKIPPED"}


def test_a_queued_passive_run_that_finds_a_trip_open_halts_without_work_or_a_new_trip(instance, db_url, db_engine,
                                                                                        cards):
    trip_id = _trip(db_engine, "run-earlier", "host_load", 9.0, 4.0)
    result = _run(instance, db_url, BatchSpec(cards, "card-event", "passive"))
    assert result.success and _skipped(result) == {"printing_votes", "dispatch_outcome"}
    row = ledger_row(db_url, result.run_id)
    assert row.status == "halted" and trip_id in row.failure_reason
    assert rows(db_url, "SELECT count(*) FROM image_evidence") == [(0,)]
    assert [t.id for t in open_trips(db_url)] == [trip_id]
    # Its cards wait for the acknowledgement, with no retry wait of their own.
    assert rows(db_url, "SELECT count(*) FROM card_work WHERE attempts = 1 AND retry_at <= now()") == [(3,)]


def test_a_passive_run_with_streaming_switched_off_halts_naming_the_switch(instance, db_url, cards):
    result = _run(instance, db_url, BatchSpec(cards, "card-event", "passive"), stream=StreamControl(enabled=False))
    row = ledger_row(db_url, result.run_id)
    assert result.success and row.status == "halted" and "streaming is disabled" in row.failure_reason
    assert rows(db_url, "SELECT count(*) FROM image_evidence") == [(0,)]


def test_a_bulk_run_refuses_an_open_trip_unless_overridden_with_a_note(instance, db_url, db_engine, cards):
    _trip(db_engine, "run-earlier", "rss", 2048.0, 1024.0)
    refused = _run(instance, db_url, BatchSpec(cards, "bulk", "bulk"))
    row = ledger_row(db_url, refused.run_id)
    assert row.status == "halted" and "--override-trip" in row.failure_reason
    forced = _run(instance, db_url, BatchSpec(cards, "bulk", "bulk", trip_override="backfill agreed with ops"))
    row = ledger_row(db_url, forced.run_id)
    assert forced.success and row.status == "completed"
    assert row.counters["trip_override"] == "backfill agreed with ops"
    assert rows(db_url, "SELECT count(*) FROM image_evidence") == [(3,)]
