"""The `source_inbox` sensor, tick by tick: small changes (new, changed and vanished files) synced in the tick and
reported as `card_sources` materializations, a draining run asked for when new cards came in, and a change too big
for a tick walked through the cursor (a `sync_sources` run, retried later if it did not take the files in, never
doubled while one is going); a directory that went away is named and left alone; the requested run really syncs."""

from __future__ import annotations

import json
import shutil

from dagster import DagsterRunStatus, Definitions, RunRequest, SensorResult, SkipReason, build_sensor_context

from stage_e_dagster.assets.sources import card_sources
from stage_e_dagster.control.intake import sync_source
from stage_e_dagster.db.core.engine import get_engine
from stage_e_dagster.db.intake.sources import add_source, list_sources
from stage_e_dagster.job_contracts import CARD_SOURCES, STREAM_DRAIN, SYNC_SOURCES
from stage_e_dagster.jobs import sync_sources
from stage_e_dagster.resources.database import AppDatabase
from stage_e_dagster.resources.stream import StreamControl
from stage_e_dagster.sensors.source_inbox import RETRY_SECONDS, build_source_inbox, evaluate_inbox
from testkit.corpus import card_files, small_scan
from testkit.instance import add_runs


def tick(instance, db_url: str, cursor: str | None, now: float = 1_000.0, **control) -> SensorResult | SkipReason:
    return evaluate_inbox(instance, get_engine(db_url), StreamControl(**control), cursor, now=now)


def synced_here(result) -> dict[str, int]:
    """The tick's `card_sources` materialization: new / changed / vanished counts (empty when it synced nothing)."""
    assert isinstance(result, SensorResult), getattr(result, "skip_message", result)
    if not result.asset_events:
        return {}
    (event,) = result.asset_events
    assert event.asset_key == CARD_SOURCES
    return {name: event.metadata[name].value for name in ("new", "changed", "vanished")}


def jobs_requested(result) -> list[str]:
    return [r.job_name for r in result.run_requests] if isinstance(result, SensorResult) else []


def sync_requested(result) -> tuple[list[str], str]:
    """The sources a tick asked a `sync_sources` run to sync, and its new cursor."""
    (request,) = [r for r in result.run_requests if r.job_name == SYNC_SOURCES]
    return request.run_config["ops"]["card_sources"]["config"]["source_keys"], result.cursor


def test_small_changes_are_synced_in_the_tick_and_new_cards_ask_for_a_draining_run(db_url, db_engine, instance,
                                                                                   tmp_path):
    assert "no source registered" in tick(instance, db_url, None).skip_message
    inbox = tmp_path / "inbox"
    small_scan(inbox / "a.png")
    with db_engine.begin() as conn:
        add_source(conn, "inbox", inbox)

    first = tick(instance, db_url, None)
    assert synced_here(first) == {"new": 1, "changed": 0, "vanished": 0} and set(card_files(db_url)) == {"a.png"}
    assert jobs_requested(first) == [STREAM_DRAIN], "the new card reaches a draining run without another hop"
    calm = tick(instance, db_url, first.cursor, now=1_005.0)
    assert isinstance(calm, SkipReason) and "1 source(s) unchanged" in calm.skip_message

    add_runs(instance, DagsterRunStatus.STARTED, 1, job=STREAM_DRAIN)  # a draining run is going
    small_scan(inbox / "b.png", shade=120)  # a file appears
    appeared = tick(instance, db_url, first.cursor, now=1_010.0)
    assert synced_here(appeared)["new"] == 1 and jobs_requested(appeared) == [], "the going draining run takes it"

    (inbox / "a.png").unlink()  # a file vanishes: no new card, no draining run asked for
    vanished = tick(instance, db_url, appeared.cursor, now=1_020.0)
    assert synced_here(vanished)["vanished"] == 1 and jobs_requested(vanished) == []
    assert card_files(db_url)["a.png"][1], "its card is marked missing"

    small_scan(inbox / "b.png", shade=200, size=(70, 95))  # a file changes
    changed = tick(instance, db_url, vanished.cursor, now=1_030.0)
    assert synced_here(changed)["changed"] == 1 and len(changed.cursor or "") < 200


def test_a_change_too_big_for_a_tick_walks_the_cursor_through_a_sync_run(db_url, db_engine, instance, tmp_path):
    inbox = tmp_path / "inbox"
    for index in range(3):
        small_scan(inbox / f"{index}.png", shade=40 * index)
    with db_engine.begin() as conn:
        add_source(conn, "inbox", inbox)

    big = tick(instance, db_url, None, inbox_read_limit=2)
    keys, cursor = sync_requested(big)
    assert keys == ["inbox"] and json.loads(cursor)["requested"].keys() == {"inbox"}
    assert not big.asset_events and card_files(db_url) == {}, "nothing was read in the tick"
    waiting = tick(instance, db_url, cursor, now=1_010.0, inbox_read_limit=2)
    assert isinstance(waiting, SkipReason) and "asking again in 290 s" in waiting.skip_message
    keys, retried = sync_requested(tick(instance, db_url, cursor, now=1_000.0 + RETRY_SECONDS + 1,
                                        inbox_read_limit=2))
    assert keys == ["inbox"], "a sync that did not take the files in is requested again, later"

    add_runs(instance, DagsterRunStatus.STARTED, 1, job=SYNC_SOURCES)
    busy = tick(instance, db_url, None, inbox_read_limit=2)
    assert isinstance(busy, SkipReason) and "already queued or running" in busy.skip_message

    with db_engine.connect() as conn:
        source = list_sources(conn)[0]
    sync_source(db_engine, source)  # what the requested run does
    calm = tick(instance, db_url, retried, now=2_000.0, inbox_read_limit=2)
    assert isinstance(calm, SkipReason) and "1 source(s) unchanged" in calm.skip_message


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
    result = tick(instance, db_url, None)
    (event,) = result.asset_events
    assert [row.data["source"] for row in event.metadata["sources"].value.records] == ["two"]
    calm = tick(instance, db_url, result.cursor)
    assert calm.skip_message == "2 source(s) unchanged since their last sync; unavailable: gone"
    assert not any(missing for _sha, missing in card_files(db_url).values()), "the gone directory's card is kept"


def test_the_requested_run_syncs_the_source(db_url, db_engine, instance, tmp_path):
    """The sensor's own definition, evaluated in a sensor context, and its sync run request executed."""
    small_scan(tmp_path / "inbox" / "a.png")
    small_scan(tmp_path / "inbox" / "sub" / "b.png", shade=99)
    with db_engine.begin() as conn:
        add_source(conn, "inbox", tmp_path / "inbox")
    database = AppDatabase(database_url=db_url)
    resources = {"database": database, "stream": StreamControl(inbox_read_limit=1)}
    sensor = build_source_inbox(5)
    with build_sensor_context(instance=instance, resources=resources) as context:
        result = sensor(context)
    (request,) = result.run_requests
    assert isinstance(request, RunRequest) and request.tags["stage_e/sync"] == "quick"
    defs = Definitions(assets=[card_sources], jobs=[sync_sources], resources={"database": database})
    run = defs.resolve_job_def(SYNC_SOURCES).execute_in_process(run_config=request.run_config, instance=instance)
    assert run.success and set(card_files(db_url)) == {"a.png", "sub/b.png"}
    with build_sensor_context(instance=instance, resources=resources, cursor=result.cursor) as context:
        assert isinstance(sensor(context), SkipReason)
