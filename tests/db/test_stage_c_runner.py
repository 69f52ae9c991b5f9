"""Stage C over real scans and a real Postgres: evidence stored once, bad files become named skips, staleness."""

from __future__ import annotations

import pytest

from stage_e_dagster.domain.evidence import extract
from stage_e_dagster.resources.database import AppDatabase
from stage_e_dagster.stages.stage_c import run_stage_c
from stage_e_dagster.workers.ocr_pool import PoolSettings
from testkit.corpus import card_ids, ingest, rendered_scans
from testkit.sql import rows


def settings(db_url: str, workers: int = 2, max_slots: int = 2) -> PoolSettings:
    return PoolSettings(workers=workers, engine="tesserocr", holder="test-run",
                        slots={"database_url": db_url, "max_slots": max_slots, "scope": "host"})


@pytest.fixture
def seeded(db_url, tmp_path):
    truth = rendered_scans(db_url, tmp_path, cards=6)
    return truth, card_ids(db_url), tmp_path


def test_batch_extracts_once_and_rerun_writes_nothing(db_url, db_engine, seeded):
    truth, ids, _root = seeded
    first = run_stage_c(db_engine, list(ids.values()), "run-1", settings(db_url))
    assert (first.extracted, first.current) == (6, 0)
    # Each worker that starts takes a slot, but under load the first can finish all six scans before the second is
    # ready, and the batch ends without it: one slot or two, never none.
    assert first.slots_held in (1, 2)
    evidence = rows(db_url, "SELECT c.identifier, e.collector_number, e.set_code, e.updated_at FROM image_evidence e "
                            "JOIN card c ON c.id = e.card_id")
    assert len(evidence) == 6
    by_name = {name: (number, code) for name, number, code, _ in evidence}
    right = sum(by_name[n][0] == c["collector_number"].lstrip("0") or by_name[n][0] == c["collector_number"]
                for n, c in truth.items())
    assert right >= 5, by_name
    again = run_stage_c(db_engine, list(ids.values()), "run-2", settings(db_url))
    assert (again.extracted, again.current) == (0, 6)
    assert rows(db_url, "SELECT c.identifier, e.collector_number, e.set_code, e.updated_at FROM image_evidence e "
                        "JOIN card c ON c.id = e.card_id") == evidence


def test_changed_bytes_make_evidence_stale(db_url, db_engine, seeded):
    truth, ids, root = seeded
    run_stage_c(db_engine, list(ids.values()), "run-1", settings(db_url))
    name = next(iter(truth))
    from PIL import Image

    with Image.open(root / "scans" / name) as img:
        img.rotate(0.5).save(root / "scans" / name)
    ingest(db_engine, root / "scans", "test")
    again = run_stage_c(db_engine, list(ids.values()), "run-2", settings(db_url))
    assert (again.extracted, again.current) == (1, 5)
    assert rows(db_url, f"SELECT count(*) FROM image_evidence WHERE card_id = {ids[name]}") == [(2,)]


def test_stale_extractor_version_recomputes_only_that_extractor(db_url, db_engine, seeded, pg_connect):
    _truth, ids, _root = seeded
    run_stage_c(db_engine, list(ids.values()), "run-1", settings(db_url, workers=1))
    # Rows written by an older hashes extractor: its columns are stale, every other column must be carried forward
    # (the sentinel collector text proves the collector extractor did not run again).
    pg_connect().cursor().execute(
        "UPDATE image_evidence SET extractor_versions = extractor_versions || '{\"hashes\": \"hashes-v0\"}', "
        "art_phash = 0, collector_raw = 'SENTINEL'"
    )
    again = run_stage_c(db_engine, list(ids.values()), "run-2", settings(db_url, workers=1))
    assert (again.extracted, again.carried_forward, again.current) == (6, 6, 0)
    after = rows(db_url, "SELECT collector_raw, art_phash, extractor_versions->>'hashes' FROM image_evidence")
    assert all(raw == "SENTINEL" and art != 0 and version == extract.EXTRACTOR_VERSIONS["hashes"]
               for raw, art, version in after), after
    assert run_stage_c(db_engine, list(ids.values()), "run-3", settings(db_url, workers=1)).current == 6


def test_bad_files_become_named_skips_and_the_batch_goes_on(db_url, db_engine, seeded):
    _truth, ids, root = seeded
    (root / "scans" / "empty.png").write_bytes(b"")
    (root / "scans" / "text.jpg").write_text("not an image")
    ingest(db_engine, root / "scans", "test")
    ids = card_ids(db_url)
    (root / "scans" / next(n for n in ids if n.endswith("(0).png"))).unlink()
    result = run_stage_c(db_engine, list(ids.values()), "run-1", settings(db_url))
    assert result.extracted == 5
    assert dict(result.skipped) == {"empty-file": 1, "unreadable-image": 1, "file-missing": 1}
    assert 0 < result.worker_seconds <= result.elapsed_seconds * result.workers_peak  # the workers' own time
    logged = rows(db_url, "SELECT skip_reason FROM card_scan_log WHERE anonymous_id = 'stage-c-extract-v1' "
                          "ORDER BY skip_reason")
    assert logged == [("empty-file",), ("file-missing",), ("unreadable-image",)]
    again = run_stage_c(db_engine, list(ids.values()), "run-2", settings(db_url))
    assert again.extracted == 0 and sum(again.skipped.values()) == 0


def test_no_free_slot_means_throttled_with_nothing_extracted(db_url, db_engine, seeded, pg_connect):
    _truth, ids, _root = seeded
    from stage_e_dagster.resources.ocr_slots import OcrSlots

    blocker = OcrSlots(database=AppDatabase(database_url=db_url), max_slots=1)
    with blocker.acquire(1) as held:
        assert held == [0]
        result = run_stage_c(db_engine, list(ids.values()), "run-1", settings(db_url, workers=2, max_slots=1))
    assert result.throttled and result.extracted == 0 and result.not_processed == 6
    assert rows(db_url, "SELECT count(*) FROM image_evidence") == [(0,)]


def test_stage_d_is_owed_until_it_decides_on_the_current_evidence(db_url, db_engine, seeded, pg_connect):
    """A crash between Stage C and Stage D leaves the cards owed to Stage D; a rewrite by Stage C re-opens them."""
    from stage_e_dagster.db.work.queue import cards_needing_work, count_needing_work
    from stage_e_dagster.stages.stage_d import run_stage_d

    _truth, ids, _root = seeded
    with db_engine.connect() as conn:
        assert count_needing_work(conn) == 6  # no evidence yet
    run_stage_c(db_engine, list(ids.values()), "run-1", settings(db_url))
    with db_engine.connect() as conn:
        assert sorted(c.id for c in cards_needing_work(conn, 100)) == sorted(ids.values())  # C done, D owed
    run_stage_d(db_engine, list(ids.values()), "run-1")
    with db_engine.connect() as conn:
        assert count_needing_work(conn) == 0
    pg_connect().cursor().execute(
        "UPDATE image_evidence SET extractor_versions = extractor_versions || '{\"legal\": \"legal-v0\"}' "
        f"WHERE card_id = {min(ids.values())}"
    )
    run_stage_c(db_engine, list(ids.values()), "run-2", settings(db_url, workers=1))
    with db_engine.connect() as conn:
        assert [c.id for c in cards_needing_work(conn, 100)] == [min(ids.values())]
