"""The backstop sweep: compare-and-swap cursor claims on a real Postgres, and the schedule on a real instance."""

from __future__ import annotations

import threading

import pytest
from dagster import (
    DagsterRunStatus,
    RunRequest,
    SkipReason,
    build_schedule_context,
)
from sqlalchemy import text

from stage_e_dagster.db.core.engine import get_engine
from stage_e_dagster.db.runs import ledger, trips
from stage_e_dagster.db.work import queue as stream
from stage_e_dagster.db.work.queue import claim_sweep_range, sweep_cursor
from stage_e_dagster.definitions import build_definitions
from stage_e_dagster.domain.calculators import JOIN_KEY_ID
from stage_e_dagster.domain.evidence.extract import EXTRACTOR_VERSIONS
from stage_e_dagster.domain.work import STAGE_C_ID
from stage_e_dagster.job_contracts import batch_from_run_config
from stage_e_dagster.resources.database import AppDatabase
from stage_e_dagster.resources.stream import StreamControl
from stage_e_dagster.sensors.backstop import backstop_sweep, build_backstop_sweep
from stage_e_dagster.settings import Settings
from testkit.instance import add_runs
from testkit.seed import (
    add_evidence,
    add_scan_log,
    mark_decided,
    reingest,
    seed_cards,
)


def sweep(instance, url: str, **control) -> list[RunRequest] | SkipReason:
    resources = {"database": AppDatabase(database_url=url), "stream": StreamControl(**control)}
    with build_schedule_context(instance=instance, resources=resources) as ctx:
        return backstop_sweep(ctx)


def cursor(url: str, name: str) -> tuple[int, int]:
    with get_engine(url).connect() as conn:
        return sweep_cursor(conn, name)


def ids_of(requests: list[RunRequest]) -> list[int]:
    return [i for r in requests for i in batch_from_run_config(r.run_config).card_ids]


def test_claims_walk_the_table_in_chunks_and_wrap(db_url, db_engine):
    ids = seed_cards(db_url, 25)
    first = claim_sweep_range(db_engine, "stage_c", 10)
    assert (first.card_ids, first.start, first.end, first.wrap_count, first.wrapped) == (
        tuple(ids[:10]), 0, ids[9], 0, False)
    second = claim_sweep_range(db_engine, "stage_c", 10)
    assert second.card_ids == tuple(ids[10:20]) and second.start == ids[9]
    last = claim_sweep_range(db_engine, "stage_c", 10)
    assert last.card_ids == tuple(ids[20:]) and last.wrapped and last.wrap_count == 0
    assert cursor(db_url, "stage_c")[1] == 1  # the loser of the last race may have started pass 1
    next_pass = claim_sweep_range(db_engine, "stage_c", 10)
    assert next_pass.card_ids == tuple(ids[:10]) and next_pass.wrap_count == 1

    idle = claim_sweep_range(db_engine, "stage_d", 10)  # nothing eligible at position 0: no pass is counted
    assert idle.card_ids == () and not idle.wrapped and cursor(db_url, "stage_d") == (0, 0)
    with pytest.raises(ValueError):
        claim_sweep_range(db_engine, "stage_x", 10)


def test_each_cursor_takes_the_cards_its_stage_needs(db_url, db_engine):
    ids = seed_cards(db_url, 10)
    fresh, stale_versions, stale_bytes, c_skipped, no_outcome, no_evidence_abst, voted, busy, gone, abstained = ids
    add_evidence(db_url, stale_versions, {**EXTRACTOR_VERSIONS, "hashes": "hashes-v0"})
    add_evidence(db_url, stale_bytes)
    mark_decided(db_url, stale_bytes)
    reingest(db_url, stale_bytes)
    add_scan_log(db_url, c_skipped, STAGE_C_ID, "truncated-image")
    add_evidence(db_url, no_outcome)
    add_evidence(db_url, no_evidence_abst)
    add_scan_log(db_url, no_evidence_abst, JOIN_KEY_ID, "no-evidence")
    add_evidence(db_url, voted)
    mark_decided(db_url, voted)
    with db_engine.begin() as conn:
        ledger.open_batch(conn, "run-busy", "card-event", "passive", [busy])
    with db_engine.begin() as conn:
        conn.execute(text("UPDATE card SET missing_since = now() WHERE id = :id"), {"id": gone})
    add_evidence(db_url, abstained)
    mark_decided(db_url, abstained)
    assert claim_sweep_range(db_engine, "stage_c", 100).card_ids == (fresh, stale_versions, stale_bytes)
    assert claim_sweep_range(db_engine, "stage_d", 100).card_ids == (no_outcome, no_evidence_abst)


def test_a_lost_race_rereads_and_claims_the_next_range(db_url, db_engine, monkeypatch):
    ids = seed_cards(db_url, 30)
    original = stream.eligible_after
    rival: list = []

    def racing(conn, name, position, limit, busy=()):
        found = original(conn, name, position, limit, busy)
        if not rival:  # another sweeper commits its claim between our read and our compare-and-swap
            rival.append(None)
            rival[0] = claim_sweep_range(conn.engine, name, limit)
        return found

    monkeypatch.setattr(stream, "eligible_after", racing)
    mine = claim_sweep_range(db_engine, "stage_c", 10)
    assert rival[0].card_ids == tuple(ids[:10])
    assert mine.card_ids == tuple(ids[10:20]) and mine.start == ids[9]

    rival.clear()
    gave_up = claim_sweep_range(db_engine, "stage_c", 10, attempts=1)
    assert gave_up.card_ids == () and not gave_up.wrapped
    assert rival[0].card_ids == tuple(ids[20:]) and not rival[0].wrapped  # exactly a chunk: the end is next
    assert cursor(db_url, "stage_c") == (ids[29], 0)


def test_two_concurrent_sweepers_claim_disjoint_ranges_covering_every_card(db_url, db_engine):
    ids = seed_cards(db_url, 300)
    claims: list[list] = [[], []]
    start = threading.Barrier(2)

    def sweeper(mine: list) -> None:
        start.wait()
        for _ in range(500):
            claim = claim_sweep_range(db_engine, "stage_c", 7)
            if claim.wrap_count > 0:  # the other sweeper finished the pass
                return
            if claim.card_ids or claim.wrapped:
                mine.append(claim)
            if claim.wrapped:
                return

    threads = [threading.Thread(target=sweeper, args=(mine,)) for mine in claims]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    taken = [i for mine in claims for c in mine for i in c.card_ids]
    assert sorted(taken) == ids and len(taken) == len(set(taken))
    ranges = sorted((c.start, c.end) for mine in claims for c in mine)
    assert all(a_end <= b_start for (_, a_end), (b_start, _) in zip(ranges, ranges[1:], strict=False))
    assert sum(c.wrapped for mine in claims for c in mine) == 1
    assert cursor(db_url, "stage_c")[1] == 1  # the loser of the last race may have started pass 1


def test_schedule_requests_batches_with_distinct_keys_across_ticks_and_passes(db_url, instance):
    ids = seed_cards(db_url, 250)
    for card in ids[:5]:
        add_evidence(db_url, card)  # these five need only Stage D
    first = sweep(instance, db_url, batch_size=50, sweep_chunk=200)
    assert ids_of(first) == ids[:5] + ids[5:205]
    assert [len(batch_from_run_config(r.run_config).card_ids) for r in first] == [5, 50, 50, 50, 50]
    for request in first:
        assert request.tags["stage_e/trigger"] == "backstop-sweep"
        assert batch_from_run_config(request.run_config).trigger == "backstop-sweep"
    assert [r.tags["stage_e/sweep_cursor"] for r in first] == ["stage_d"] + ["stage_c"] * 4

    # stage_d covered its five cards and wrapped in tick 1, so tick 2 starts its next pass; stage_c finishes its
    # first pass with the rest of the table
    second = sweep(instance, db_url, batch_size=50, sweep_chunk=200)
    assert ids_of(second) == ids[:5] + ids[205:]
    assert cursor(db_url, "stage_c") == (0, 1) and cursor(db_url, "stage_d") == (0, 2)
    third = sweep(instance, db_url, batch_size=50, sweep_chunk=200)  # nobody processed anything: next pass
    assert ids_of(third)[:5] == ids[:5]
    keys = [r.run_key for tick in (first, second, third) for r in tick]
    assert len(keys) == len(set(keys))


def test_schedule_is_gated_like_the_stream(db_url, db_engine, instance):
    ids = seed_cards(db_url, 100)
    with db_engine.begin() as conn:
        trip_id = trips.record_trip(conn, "run-y", "rss", 2048.0, 1024.0)
    halted = sweep(instance, db_url)
    assert isinstance(halted, SkipReason) and trip_id in halted.skip_message
    assert cursor(db_url, "stage_c") == (0, 0)  # a halted sweep claims nothing
    with db_engine.begin() as conn:
        trips.acknowledge(conn, trip_id, "restarted the worker")

    disabled = sweep(instance, db_url, enabled=False)
    assert isinstance(disabled, SkipReason) and "disabled" in disabled.skip_message

    add_runs(instance, DagsterRunStatus.QUEUED, 6)
    capped = sweep(instance, db_url, batch_size=10)
    assert len(capped) == 2 and ids_of(capped) == ids[:20]
    assert cursor(db_url, "stage_c") == (ids[19], 0)  # only what was requested is consumed
    add_runs(instance, DagsterRunStatus.QUEUED, 2)
    full = sweep(instance, db_url, batch_size=10)
    assert isinstance(full, SkipReason) and "backpressure" in full.skip_message


def test_schedule_skips_when_nothing_needs_work(db_url, instance):
    card = seed_cards(db_url, 1)[0]
    add_evidence(db_url, card)
    mark_decided(db_url, card)
    assert isinstance(sweep(instance, db_url), SkipReason)


def test_cron_and_timezone_come_from_the_settings():
    default = build_backstop_sweep()
    assert (default.cron_schedule, default.execution_timezone) == ("*/30 * * * *", "UTC")
    env = {"STAGE_E_SWEEP_CRON": "0 * * * *", "STAGE_E_SWEEP_TIMEZONE": "Europe/Berlin"}
    built = build_definitions(Settings.from_env(env)).get_schedule_def("backstop_sweep")
    assert (built.name, built.cron_schedule, built.execution_timezone) == (
        "backstop_sweep", "0 * * * *", "Europe/Berlin")
    with pytest.raises(ValueError, match="STAGE_E_SWEEP_TIMEZONE"):
        build_backstop_sweep(timezone="Mars/Olympus")
    with pytest.raises(ValueError, match="cron"):
        build_backstop_sweep(cron="every half hour", timezone="UTC")


def test_the_sweep_leaves_cards_of_queued_runs_alone(db_url, instance):
    ids = seed_cards(db_url, 5)
    add_runs(instance, DagsterRunStatus.QUEUED, 1, card_ids=tuple(ids[1:3]))
    requests = sweep(instance, db_url, batch_size=10)
    swept = [i for r in requests for i in batch_from_run_config(r.run_config).card_ids]
    assert swept == [ids[0], *ids[3:]]
