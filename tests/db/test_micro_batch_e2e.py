"""End to end: generated scans -> card_stream sensor -> micro_batch runs -> evidence, votes, review, ledger."""

from __future__ import annotations

import pytest
from dagster import DagsterInstance, SensorResult, build_sensor_context

from stage_e_dagster.host import default_load_target
from stage_e_dagster.sensors.card_stream import card_stream
from testkit.corpus import demo_corpus
from testkit.jobs import micro_batch_job, resources
from testkit.seed import ledger_row
from testkit.sql import rows

pytestmark = pytest.mark.slow


def _tick(instance, db_url, cursor=None):
    res = resources(db_url)
    with build_sensor_context(instance=instance, cursor=cursor,
                              resources={"database": res["database"], "stream": res["stream"]}) as ctx:
        return card_stream(ctx)


def test_stream_to_completed_ledger(db_url, tmp_path):
    demo_corpus(db_url, tmp_path / "demo", cards=60)
    instance = DagsterInstance.ephemeral()
    result = _tick(instance, db_url)
    assert isinstance(result, SensorResult)
    requests = result.run_requests
    assert [len(r.run_config["ops"]["image_evidence"]["config"]["card_ids"]) for r in requests] == [25, 25, 10]
    job = micro_batch_job(db_url)
    for request in requests:
        run = job.execute_in_process(run_config=request.run_config, instance=instance, tags=request.tags)
        assert run.success
        assert ledger_row(db_url, run.run_id).status == "completed"

    unfinished = rows(db_url, """
        SELECT c.identifier FROM card c
        WHERE NOT EXISTS (SELECT 1 FROM image_evidence e WHERE e.card_id = c.id AND e.content_sha256 = c.content_sha256)
           OR NOT (EXISTS (SELECT 1 FROM card_printing_tag t WHERE t.card_id = c.id)
                   OR EXISTS (SELECT 1 FROM card_scan_log l WHERE l.card_id = c.id AND l.skip_reason = 'to-review'))
    """)
    assert unfinished == []
    statuses = rows(db_url, "SELECT status, count(*) FROM dispatch_ledger GROUP BY status")
    assert statuses == [("completed", 3)]
    counters = ledger_row(db_url, run.run_id).counters
    assert {"stage_c", "stage_d", "stage_e"} <= set(counters)
    # How many OCR workers ran and why: in the ledger counters and the Stage C materialisation alike.
    (materialization,) = run.asset_materializations_for_node("image_evidence")
    shown = {key: materialization.metadata[key].value for key in ("workers_why", "load_target", "load_peak")}
    assert shown == {key: counters["stage_c"][key] for key in shown}
    assert shown["load_target"] == default_load_target() and shown["load_peak"] is not None
    assert shown["workers_why"].startswith(f"up to {counters['stage_c']['workers_cap']} OCR worker(s)")

    again = _tick(instance, db_url, cursor=result.cursor)
    assert not getattr(again, "run_requests", None), "a second tick must not request the same cards again"
    rerun = job.execute_in_process(run_config=requests[0].run_config, instance=instance)
    assert rerun.success
    assert ledger_row(db_url, rerun.run_id).counters["stage_c"]["workers_why"].startswith("no card needs")
    assert rows(db_url, "SELECT count(*) FROM image_evidence") == [(60,)]
    duplicates = rows(db_url, "SELECT card_id, anonymous_id, printing_id, count(*) FROM card_printing_tag "
                              "GROUP BY 1, 2, 3 HAVING count(*) > 1")
    assert duplicates == []
