"""End to end: generated scans -> card_stream sensor -> a draining run -> its claims as micro_batch runs ->
evidence, votes, review, ledger."""

from __future__ import annotations

import pytest
from dagster import (
    DagsterEventType,
    DagsterRunStatus,
    RunsFilter,
    SensorResult,
    build_sensor_context,
)

from stage_e_dagster.db.work.queue import has_offered
from stage_e_dagster.host import default_load_target
from stage_e_dagster.job_contracts import STREAM_DRAIN, TAG_DRAIN_RUN, batch_from_run_config
from stage_e_dagster.sensors.card_stream import card_stream
from testkit.corpus import demo_corpus
from testkit.instance import add_runs
from testkit.jobs import resources, stage_definitions
from testkit.seed import ledger_row
from testkit.sql import rows

pytestmark = pytest.mark.slow


def _tick(instance, db_url, cursor=None):
    res = resources(db_url)
    with build_sensor_context(instance=instance, cursor=cursor,
                              resources={"database": res["database"], "stream": res["stream"]}) as ctx:
        return card_stream(ctx)


def test_stream_to_completed_ledger(db_url, db_engine, tmp_path, instance):
    """On dagster-postgres (the `instance` fixture): the sensor's backpressure and the claims' busy cards are read
    from run storage, where storage matters."""
    demo_corpus(db_url, tmp_path / "demo", cards=60)
    result = _tick(instance, db_url)
    assert isinstance(result, SensorResult)
    (request,) = result.run_requests
    assert request.job_name == STREAM_DRAIN

    (queued,) = add_runs(instance, DagsterRunStatus.QUEUED, 1, job=STREAM_DRAIN)  # the daemon queued it
    with db_engine.connect() as conn:
        assert has_offered(conn)  # cards are still owed
    again = _tick(instance, db_url, cursor=result.cursor)
    assert not getattr(again, "run_requests", None), "a second tick must not start a second draining run"
    instance.delete_run(queued)  # the stand-in for the queued run, which is executed here in process

    defs = stage_definitions(db_url)
    drain = defs.resolve_job_def(STREAM_DRAIN).execute_in_process(instance=instance, tags=request.tags)
    assert drain.success
    claims = instance.get_runs(RunsFilter(job_name="micro_batch", tags={TAG_DRAIN_RUN: drain.run_id}))
    assert sorted(len(batch_from_run_config(run.run_config).card_ids) for run in claims) == [10, 25, 25]
    assert {ledger_row(db_url, run.run_id).status for run in claims} == {"completed"}

    unfinished = rows(db_url, """
        SELECT c.identifier FROM card c
        WHERE NOT EXISTS (SELECT 1 FROM image_evidence e WHERE e.card_id = c.id AND e.content_sha256 = c.content_sha256)
           OR NOT (EXISTS (SELECT 1 FROM card_printing_tag t WHERE t.card_id = c.id)
                   OR EXISTS (SELECT 1 FROM card_scan_log l WHERE l.card_id = c.id AND l.skip_reason = 'to-review'))
    """)
    assert unfinished == []
    statuses = rows(db_url, "SELECT status, count(*) FROM dispatch_ledger GROUP BY status")
    assert statuses == [("completed", 3)]
    last = claims[0]
    counters = ledger_row(db_url, last.run_id).counters
    assert {"stage_c", "stage_d", "stage_e"} <= set(counters)
    # How many OCR workers ran and why: in the ledger counters and the Stage C materialisation alike.
    (materialization,) = [event.asset_materialization for event in instance.all_logs(
        last.run_id, of_type=DagsterEventType.ASSET_MATERIALIZATION)
        if event.asset_materialization.asset_key.path == ["image_evidence"]]
    shown = {key: materialization.metadata[key].value for key in ("workers_why", "load_target", "load_peak")}
    assert shown == {key: counters["stage_c"][key] for key in shown}
    assert shown["load_target"] == default_load_target() and shown["load_peak"] is not None
    assert counters["stage_c"]["workers_reused"] >= 1, "the draining run kept its OCR workers from claim to claim"

    rerun = defs.resolve_job_def("micro_batch").execute_in_process(run_config=last.run_config, instance=instance)
    assert rerun.success
    assert ledger_row(db_url, rerun.run_id).counters["stage_c"]["workers_why"].startswith("no card needs")
    assert rows(db_url, "SELECT count(*) FROM image_evidence") == [(60,)]
