"""The `source_inbox` sensor, tick by tick: a cursor walked through new, changed and vanished files, a sync that
failed, a sync already under way, and a directory that went away; and the run it requests really syncs."""

from __future__ import annotations

import json
import shutil

from dagster import DagsterRunStatus, Definitions, RunRequest, SensorResult, SkipReason, build_sensor_context

from stage_e_dagster.assets.sources import card_sources
from stage_e_dagster.db.core.engine import get_engine
from stage_e_dagster.db.intake.sources import add_source, list_sources, sync_source
from stage_e_dagster.jobs import SYNC_SOURCES, sync_sources
from stage_e_dagster.resources.database import AppDatabase
from stage_e_dagster.sensors.source_inbox import RETRY_SECONDS, build_source_inbox, evaluate_inbox
from testkit.corpus import card_files, small_scan
from testkit.instance import add_runs


def tick(instance, db_url: str, cursor: str | None, now: float = 1_000.0) -> SensorResult | SkipReason:
    return evaluate_inbox(instance, get_engine(db_url), cursor, now=now)


def requested(result) -> tuple[list[str], str]:
    """The sources a tick asked to sync, and its new cursor."""
    assert isinstance(result, SensorResult), getattr(result, "skip_message", result)
    (request,) = result.run_requests
    return request.run_config["ops"]["card_sources"]["config"]["source_keys"], result.cursor


def test_walking_the_cursor_through_new_changed_and_vanished_files(db_url, db_engine, instance, tmp_path):
    assert "no source registered" in tick(instance, db_url, None).skip_message
    inbox = tmp_path / "inbox"
    small_scan(inbox / "a.png")
    with db_engine.begin() as conn:
        add_source(conn, "inbox", inbox)

    keys, cursor = requested(tick(instance, db_url, None))  # never synced: sync it
    assert keys == ["inbox"] and json.loads(cursor)["requested"].keys() == {"inbox"}
    waiting = tick(instance, db_url, cursor, now=1_010.0)
    assert isinstance(waiting, SkipReason) and "asking again in 290 s" in waiting.skip_message
    keys, retried = requested(tick(instance, db_url, cursor, now=1_000.0 + RETRY_SECONDS + 1))
    assert keys == ["inbox"], "a sync that did not take the files in is requested again, later"

    with db_engine.connect() as conn:
        source = list_sources(conn)[0]
    sync_source(db_engine, source)  # what the requested run does
    calm = tick(instance, db_url, retried, now=2_000.0)
    assert isinstance(calm, SkipReason) and "1 source(s) unchanged" in calm.skip_message

    small_scan(inbox / "b.png", shade=120)  # a file appears
    keys, cursor = requested(tick(instance, db_url, retried, now=2_010.0))
    assert keys == ["inbox"]
    with db_engine.connect() as conn:
        source = list_sources(conn)[0]
    sync_source(db_engine, source)
    assert isinstance(tick(instance, db_url, cursor, now=2_020.0), SkipReason)

    (inbox / "a.png").unlink()  # a file vanishes
    keys, cursor = requested(tick(instance, db_url, cursor, now=2_030.0))
    with db_engine.connect() as conn:
        source = list_sources(conn)[0]
    sync_source(db_engine, source)
    small_scan(inbox / "b.png", shade=200, size=(70, 95))  # a file changes
    keys, cursor = requested(tick(instance, db_url, cursor, now=2_040.0))
    assert keys == ["inbox"] and len(cursor) < 200, "the cursor stays small whatever the directory holds"


def test_nothing_more_is_requested_while_a_sync_is_queued_or_running(db_url, db_engine, instance, tmp_path):
    small_scan(tmp_path / "inbox" / "a.png")
    with db_engine.begin() as conn:
        add_source(conn, "inbox", tmp_path / "inbox")
    add_runs(instance, DagsterRunStatus.STARTED, 1, job=SYNC_SOURCES)
    busy = tick(instance, db_url, None)
    assert isinstance(busy, SkipReason) and "already queued or running" in busy.skip_message


def test_only_changed_sources_are_synced_and_a_missing_directory_is_named(db_url, db_engine, instance, tmp_path):
    for name in ("one", "two", "gone"):
        small_scan(tmp_path / name / "a.png")
        with db_engine.begin() as conn:
            add_source(conn, name, tmp_path / name)
    with db_engine.connect() as conn:
        sources = list_sources(conn)
    for source in sources:
        sync_source(db_engine, source)
    shutil.rmtree(tmp_path / "gone")
    small_scan(tmp_path / "two" / "b.png", shade=99)
    keys, cursor = requested(tick(instance, db_url, None))
    assert keys == ["two"]
    with db_engine.connect() as conn:
        source = list_sources(conn, ["two"])[0]
    sync_source(db_engine, source)
    calm = tick(instance, db_url, cursor)
    assert calm.skip_message == "2 source(s) unchanged since their last sync; unavailable: gone"
    assert not any(missing for _sha, missing in card_files(db_url).values()), "the gone directory's card is kept"


def test_the_requested_run_syncs_the_source(db_url, db_engine, instance, tmp_path):
    """The sensor's own definition, evaluated in a sensor context, and its run request executed: the cards appear."""
    small_scan(tmp_path / "inbox" / "a.png")
    small_scan(tmp_path / "inbox" / "sub" / "b.png", shade=99)
    with db_engine.begin() as conn:
        add_source(conn, "inbox", tmp_path / "inbox")
    database = AppDatabase(database_url=db_url)
    sensor = build_source_inbox(5)
    with build_sensor_context(instance=instance, resources={"database": database}) as context:
        result = sensor(context)
    (request,) = result.run_requests
    assert isinstance(request, RunRequest) and request.tags["stage_e/sync"] == "quick"
    defs = Definitions(assets=[card_sources], jobs=[sync_sources], resources={"database": database})
    run = defs.resolve_job_def(SYNC_SOURCES).execute_in_process(run_config=request.run_config, instance=instance)
    assert run.success and set(card_files(db_url)) == {"a.png", "sub/b.png"}
    with build_sensor_context(instance=instance, resources={"database": database}, cursor=result.cursor) as context:
        assert isinstance(sensor(context), SkipReason)
