"""`stage-e status`: one screen that tells an operator where the pipeline stands."""

from __future__ import annotations

from click.testing import CliRunner

from stage_e_dagster.cli import main
from stage_e_dagster.db.runs import ledger, trips
from testkit.seed import add_evidence, mark_decided, seed_cards


def test_status_shows_backlog_batches_and_a_halt(db_url, db_engine, monkeypatch):
    monkeypatch.setenv("STAGE_E_DATABASE_URL", db_url)
    ids = seed_cards(db_url, 5)
    add_evidence(db_url, ids[0])
    add_evidence(db_url, ids[1])
    mark_decided(db_url, ids[1])
    with db_engine.begin() as conn:
        ledger.open_batch(conn, "run-ok-123456", "card-event", "passive", ids[:2])
        ledger.close(conn, "run-ok-123456", "completed")
    runner = CliRunner()
    calm = runner.invoke(main, ["status"])
    assert calm.exit_code == 0, calm.output
    assert "cards:    5 (5 unresolved)" in calm.output
    assert "backlog:  3 need evidence (C), 1 need votes (D)" in calm.output
    assert "batches:  1 completed" in calm.output and "stream:   open" in calm.output
    assert "run-ok-1" in calm.output
    with db_engine.begin() as conn:
        trip = trips.record_trip(conn, "run-bad", "host_load", 9.0, 1.0)
    halted = runner.invoke(main, ["status"])
    assert f"HALTED:   1 open envelope trip(s), first {trip}" in halted.output
