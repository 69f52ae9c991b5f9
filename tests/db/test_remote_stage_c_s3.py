"""End to end through the real `micro_batch` job on moto's S3-compatible server: `stage-e sources add s3://...`,
a sync by listing, Stage C fetching through the limiter and extracting on OCR workers, the outcomes in the ledger,
the asset metadata and `stage-e status`; then a lockout that halts the run with a trip naming the source, and the
acknowledgement that reopens the stream."""

from __future__ import annotations

import io
import re

from click.testing import CliRunner
from dagster import DagsterEventType
from sqlalchemy import text

from stage_e_dagster.cli import main
from stage_e_dagster.control.failures import record_in_process_failure
from stage_e_dagster.db.catalog.importer import import_catalog
from stage_e_dagster.demo.catalog import generate_catalog, write_catalog
from stage_e_dagster.demo.render import render_scan
from stage_e_dagster.job_contracts import BatchSpec
from stage_e_dagster.resources.remote import RemoteFetch
from testkit.jobs import micro_batch_job
from testkit.remote import CREDENTIALS, card_state
from testkit.seed import ledger_row


def _upload(s3, count: int, start: int = 0) -> None:
    catalogue = generate_catalog(30, seed=5)
    for i in range(start, start + count):
        card = catalogue[(i * 7) % len(catalogue)]
        out = io.BytesIO()
        render_scan(card, long_side=880, bleed=False, seed=i).save(out, format="PNG")
        s3.put(f"scans/{card['name'].split(' // ')[0]} [{card['set'].upper()}] ({i}).png", out.getvalue())


def _ids(db_engine) -> list[int]:
    with db_engine.connect() as conn:
        return list(conn.execute(text("SELECT id FROM card WHERE card_work_stage(id) = 'C' ORDER BY id")).scalars())


def test_an_s3_source_end_to_end_then_a_lockout_and_its_acknowledgement(db_url, db_engine, s3_env, tmp_path,
                                                                        monkeypatch, instance):
    """On dagster-postgres (the `instance` fixture): the halted run's failure is recorded from its stored run, as
    for every run-failure test."""
    monkeypatch.setenv("STAGE_E_DATABASE_URL", db_url)
    write_catalog(tmp_path / "catalog.json", generate_catalog(30, seed=5))
    import_catalog(db_engine, tmp_path / "catalog.json")
    _upload(s3_env, 4)
    runner = CliRunner()
    added = runner.invoke(main, ["sources", "add", "s3://scans/scans", "--key", "bucket", "--endpoint",
                                 s3_env.endpoint, "--credentials", CREDENTIALS])
    assert added.exit_code == 0, added.output
    synced = runner.invoke(main, ["sources", "sync", "bucket"])
    assert synced.exit_code == 0 and "bucket: 4 new" in synced.output, synced.output
    listed = runner.invoke(main, ["sources", "list"])
    assert "s3, credentials TESTSET" in listed.output and s3_env.SECRET_KEY not in listed.output

    remote = RemoteFetch(cache_dir=str(tmp_path / "cache"), rate=50.0, lockout_forbidden=3)
    job = micro_batch_job(db_url, remote=remote)
    cards = _ids(db_engine)
    result = job.execute_in_process(run_config=BatchSpec(tuple(cards), "manual", "passive").run_config(),
                                    instance=instance)
    assert result.success
    assert all(state[0] for state in card_state(db_engine, "bucket").values()), "every card's bytes verified"
    with db_engine.connect() as conn:
        evidenced = conn.execute(text("SELECT count(*) FROM image_evidence e JOIN card c ON c.id = e.card_id "
                                      "AND c.content_sha256 = e.content_sha256")).scalar()
    assert evidenced == 4
    fetch = ledger_row(db_url, result.run_id).counters["stage_c"]["fetch"]
    assert fetch["fetched"] == 4 and fetch["requests"] == 4
    (event,) = [e.asset_materialization for e in instance.all_logs(result.run_id,
                of_type=DagsterEventType.ASSET_MATERIALIZATION) if e.asset_materialization.asset_key.path ==
                ["image_evidence"]]
    assert event.metadata["fetch_fetched"].value == 4 and event.metadata["fetch_throttled"].value == 0
    assert len(s3_env.record.seen) == 4, "one request per card, none for the listing"
    assert not any(p.is_file() for p in (tmp_path / "cache").rglob("*")), "settled cards leave the cache"
    status = runner.invoke(main, ["status"])
    assert "fetch:    pace 1 x the rate" in status.output and "fetched" in status.output

    _upload(s3_env, 5, start=10)
    assert "5 new" in runner.invoke(main, ["sources", "sync", "bucket"]).output
    s3_env.faults.lockout = True
    spec = BatchSpec(tuple(_ids(db_engine)), "manual", "passive")
    halted = job.execute_in_process(run_config=spec.run_config(), instance=instance, raise_on_error=False)
    assert not halted.success
    assert record_in_process_failure(db_engine, halted, spec) == "halted", "a lockout halts as an envelope breach"
    trips = runner.invoke(main, ["trips", "list"])
    assert "fetch_lockout" in trips.output and "source bucket" in trips.output
    status = runner.invoke(main, ["status"])
    assert "HALTED" in status.output and "source bucket" in status.output
    assert ledger_row(db_url, halted.run_id).status == "halted"
    trip_id = re.search(r"envtrip-\S+", trips.output).group(0)
    ack = runner.invoke(main, ["trips", "ack", trip_id, "--note", "the bucket policy was restored"])
    assert ack.exit_code == 0, ack.output
    s3_env.faults.lockout = False
    resumed = job.execute_in_process(run_config=BatchSpec(tuple(_ids(db_engine)), "manual", "passive").run_config(),
                                     instance=instance)
    assert resumed.success and all(state[0] for state in card_state(db_engine, "bucket").values())
