"""Identity groups on a real Postgres: copies of one image (same bytes) share one Stage C extraction, in one batch
and across concurrent batches, show once in the review queue, and share a human vote."""

from __future__ import annotations

import multiprocessing as mp
import shutil
import threading
import time
import traceback
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import text

from stage_e_dagster.commands.review import review
from stage_e_dagster.db.core.engine import get_engine
from stage_e_dagster.db.judgement.evidence_store import load_batch, log_skip
from stage_e_dagster.db.judgement.identity_groups import content_key
from stage_e_dagster.db.judgement.votes import cast_human_vote
from stage_e_dagster.db.review.queue import review_queue, review_queue_size
from stage_e_dagster.domain.evidence.model import EvidenceSkip
from stage_e_dagster.stages.stage_c import run_stage_c
from stage_e_dagster.stages.stage_d import run_stage_d
from stage_e_dagster.workers.ocr_pool import PoolSettings
from testkit.corpus import card_ids, ingest, named_scans
from testkit.seed import VERSIONS, add_cards, add_evidence, mini_catalog
from testkit.sql import rows

EXTRACTED = ("collector_raw, collector_number, set_code, legal_raw, copyright_year, art_phash, symbol_phash, "
             "border_color, bleed_class, blur_variance, extractor_versions")


def settings(db_url: str, holder: str = "test") -> PoolSettings:
    return PoolSettings(workers=1, engine="tesserocr", holder=holder,
                        slots={"database_url": db_url, "max_slots": 2, "scope": "host"})


def originals(db_url: str) -> list[tuple]:
    """Per content hash: how many evidence rows were extracted from their own file (not carried)."""
    return rows(db_url, "SELECT content_sha256, count(*) FILTER (WHERE carried_from_card_id IS NULL), count(*) "
                        "FROM image_evidence GROUP BY content_sha256 ORDER BY 1")


def test_one_batch_extracts_each_image_once_and_carries_it_to_its_copies(db_url, db_engine, tmp_path):
    named_scans(db_url, tmp_path, {"a/A.png": 1, "a/B.png": 2, "a/C.png": 3, "b/D.png": 4})
    shutil.copy(tmp_path / "a/A.png", tmp_path / "a/A again.png")
    shutil.copy(tmp_path / "a/A.png", tmp_path / "b/A elsewhere.png")  # the same file in a second source
    shutil.copy(tmp_path / "a/C.png", tmp_path / "a/C again.png")
    (tmp_path / "a/junk.png").write_bytes(b"not an image at all")
    shutil.copy(tmp_path / "a/junk.png", tmp_path / "a/junk again.png")
    ingest(db_engine, tmp_path / "a", "a")
    ingest(db_engine, tmp_path / "b", "b")
    ids = card_ids(db_url)
    c_leader = min(ids["C.png"], ids["C again.png"])  # its file vanishes: the other copy must be read instead
    (tmp_path / "a" / next(n for n in ("C.png", "C again.png") if ids[n] == c_leader)).unlink()

    counters = run_stage_c(db_engine, sorted(ids.values()), "run-1", settings(db_url))
    assert (counters.extracted, counters.copies_carried) == (4, 3)  # A, B, C (second copy), D; 3 copies carried
    assert dict(counters.skipped) == {"unreadable-image": 1, "file-missing": 1}
    # Every image was read from a file once, whatever its number of copies (A has three, C's second copy was read).
    assert sorted((n, total) for _, n, total in originals(db_url)) == [(1, 1), (1, 1), (1, 1), (1, 3)]
    read, *carried = sorted(ids[n] for n in ("A.png", "A again.png", "A elsewhere.png"))  # the first copy is read
    a = rows(db_url, f"SELECT {EXTRACTED} FROM image_evidence WHERE card_id = {read} AND carried_from_card_id IS NULL")
    assert len(a) == 1
    for copy in carried:
        assert rows(db_url, f"SELECT carried_from_card_id, run_id FROM image_evidence WHERE card_id = {copy}"
                    ) == [(read, "run-1")]
        assert rows(db_url, f"SELECT {EXTRACTED} FROM image_evidence WHERE card_id = {copy}") == a
    junk = sorted((ids["junk.png"], ids["junk again.png"]))
    assert rows(db_url, "SELECT card_id, skip_reason, detail->>'carried_from_card_id' FROM card_scan_log "
                        "ORDER BY card_id") == sorted([
        (junk[0], "unreadable-image", None), (junk[1], "unreadable-image", str(junk[0])),
        (c_leader, "file-missing", None)])

    again = run_stage_c(db_engine, sorted(ids.values()), "run-2", settings(db_url))
    assert (again.extracted, again.copies_carried, again.current) == (0, 0, len(ids))


def _race_batch(url: str, ids: list[int], holder: str, barrier: Any, results: Any) -> None:
    try:
        barrier.wait(timeout=120)
        counters = run_stage_c(get_engine(url), ids, holder, settings(url, holder))
        results.put((holder, counters.as_dict(), None))
    except BaseException:  # noqa: BLE001 - report every failure to the parent
        results.put((holder, None, traceback.format_exc()))


@pytest.mark.slow
def test_copies_in_concurrent_batches_are_read_once(db_url, db_engine, tmp_path):
    named_scans(db_url, tmp_path, {"s/X.png": 5, "s/Y.png": 6, "s/Z.png": 8})
    for name in ("X", "Y", "Z"):
        for copy in range(2):
            shutil.copy(tmp_path / f"s/{name}.png", tmp_path / f"s/{name} copy {copy}.png")
    ingest(db_engine, tmp_path / "s", "s")
    ids = sorted(card_ids(db_url).values())
    ctx = mp.get_context("spawn")
    barrier, results = ctx.Barrier(2), ctx.Queue()
    batches = [ids[::-1][:7], ids[:7]]  # overlapping, each holding copies of every image, in opposite orders
    procs = [ctx.Process(target=_race_batch, args=(db_url, batch, f"race-{i}", barrier, results))
             for i, batch in enumerate(batches)]
    for proc in procs:
        proc.start()
    reports = [results.get(timeout=300) for _ in procs]
    for proc in procs:
        proc.join(timeout=60)
    assert [err for _, _, err in reports if err] == []
    # The database's final state against the rules: every card has exactly one evidence row, and each image
    # was read from a file exactly once (one row per image not carried from a copy).
    assert rows(db_url, "SELECT count(*), count(DISTINCT card_id) FROM image_evidence") == [(9, 9)]
    assert [(n, total) for _, n, total in originals(db_url)] == [(1, 3)] * 3
    assert sum(counters["extracted"] for _, counters, _ in reports) == 3


@pytest.fixture
def copies(db_url):
    """Three "Opt" cards: two copies of one image (same bytes) and one other image, none with readable text."""
    mini_catalog(db_url)
    ids = add_cards(db_url, [("Opt (1).png", "Opt", None), ("Opt (2).png", "Opt", None),
                             ("Opt (3).png", "Opt", None)])
    with get_engine(db_url).begin() as conn:
        conn.exec_driver_sql(f"UPDATE card SET content_sha256 = 'a{'0' * 63}' WHERE id IN ({ids[0]}, {ids[1]})")
    return ids


def test_a_batch_waits_for_the_batch_reading_a_copy_then_carries_its_result(db_url, db_engine, copies, pg_connect):
    first, second, _ = copies
    other_batch = pg_connect()  # another batch, reading the first copy's bytes right now
    other_batch.cursor().execute("SELECT pg_advisory_lock(%s, %s)", content_key("a" + "0" * 63))
    out: dict[str, Any] = {}
    batch = threading.Thread(target=lambda: out.update(c=run_stage_c(db_engine, [second], "run-2", settings(db_url))))
    batch.start()
    time.sleep(1.0)
    assert batch.is_alive() and rows(db_url, "SELECT count(*) FROM image_evidence") == [(0,)]  # it waits, reads nothing
    add_evidence(db_url, first, collector_raw="READ BY THE OTHER BATCH", run_id="run-1")
    other_batch.cursor().execute("SELECT pg_advisory_unlock_all()")
    batch.join(timeout=30)
    assert (out["c"].extracted, out["c"].copies_carried, out["c"].not_processed) == (0, 1, 0)
    assert rows(db_url, f"SELECT collector_raw, carried_from_card_id, extractor_versions FROM image_evidence "
                        f"WHERE card_id = {second}") == [("READ BY THE OTHER BATCH", first, VERSIONS)]


def test_a_copy_still_being_read_elsewhere_after_the_wait_is_left_for_later(db_url, db_engine, copies, pg_connect):
    _, second, _ = copies
    pg_connect().cursor().execute("SELECT pg_advisory_lock(%s, %s)", content_key("a" + "0" * 63))
    counters = run_stage_c(db_engine, [second], "run-2", settings(db_url), copy_wait_seconds=0.3)
    assert (counters.extracted, counters.not_processed) == (0, 1)
    assert rows(db_url, "SELECT count(*) FROM image_evidence") == [(0,)]


def test_the_review_queue_shows_a_group_once_and_a_vote_applies_to_every_copy(db_url, db_engine, copies, monkeypatch):
    first, second, other = copies
    for card in copies:
        add_evidence(db_url, card, collector_raw="~~", border_color="black")
    run_stage_d(db_engine, copies, "run-1")
    with db_engine.connect() as conn:
        queue = review_queue(conn)
        assert review_queue_size(conn) == 2
    assert [(item.card_id, item.copies) for item in queue] == [(first, 2), (other, 1)]
    monkeypatch.setenv("STAGE_E_DATABASE_URL", db_url)
    listed = CliRunner().invoke(review, ["list"]).output
    assert listed.startswith("2 cards awaiting review") and "copies: 2 cards with these exact bytes" in listed

    result = cast_human_vote(db_engine, second, "alice", scryfall_id="sf-ccc-12", admin=True)
    assert result.copies == (first,) and result.printing_status == "resolved" and result.recorded
    assert rows(db_url, "SELECT card_id, anonymous_id, applied_from_card_id FROM card_printing_tag "
                        "WHERE source <> 'ocr' ORDER BY card_id") == [(first, "alice", second), (second, "alice", None)]
    assert rows(db_url, "SELECT id, printing_status FROM card ORDER BY id") == [
        (first, "resolved"), (second, "resolved"), (other, "unresolved")]
    with db_engine.connect() as conn:
        assert [item.card_id for item in review_queue(conn)] == [other]

    again = cast_human_vote(db_engine, first, "alice", no_match=True, admin=True)  # a change of mind, on either copy
    assert again.recorded and again.write.replaced == 2
    assert rows(db_url, "SELECT card_id, reason FROM card_printing_tag_archive ORDER BY card_id") == [
        (first, "human-override"), (second, "human-override")]
    assert rows(db_url, f"SELECT printing_status FROM card WHERE id IN ({first}, {second})") == [
        ("no_match",), ("no_match",)]


def test_content_locks_take_the_free_hashes_in_one_round_and_leave_the_held_ones(db_engine):
    """Two batches' lock sessions: the second takes only the hashes the first does not hold, and gets the rest once
    the first lets go (the lock state is read back from pg_locks, not from the code under test)."""
    from stage_e_dagster.db.judgement.identity_groups import ContentLocks

    hashes = [f"{i:02x}" * 32 for i in (1, 2, 3)]
    with ContentLocks(db_engine, "a") as first, ContentLocks(db_engine, "b") as second:
        assert first.try_lock(hashes[:2]) == set(hashes[:2])
        assert second.try_lock(hashes) == {hashes[2]}
        with db_engine.connect() as conn:
            from sqlalchemy import text

            held = conn.execute(text("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted")).scalar()
        assert held == 3
        first.release(hashes[0])
        assert second.try_lock(hashes) == {hashes[0], hashes[2]}


def test_a_file_skip_logged_for_one_copy_is_that_copys_alone(db_url, db_engine):
    """Two cards with the same bytes, one whose file was missing: Stage C counts the skip against that card only
    (the other copy's file is still to be read), and the other copy's own skip, when it comes, is logged too."""
    first, second = add_cards(db_url, [("A.png", "Opt", None), ("A again.png", "Opt", None)])
    with db_engine.begin() as conn:
        conn.execute(text("UPDATE card SET content_sha256 = (SELECT content_sha256 FROM card WHERE id = :a) "
                          "WHERE id = :b"), {"a": first, "b": second})
        sha = conn.execute(text("SELECT content_sha256 FROM card WHERE id = :a"), {"a": first}).scalar_one()
        assert log_skip(conn, first, sha, EvidenceSkip("file-missing"), "run-1")
    with db_engine.connect() as conn:
        assert {work.card_id: work.skipped_before for work in load_batch(conn, [first, second])} == {
            first: True, second: False}
    with db_engine.begin() as conn:
        assert log_skip(conn, second, sha, EvidenceSkip("file-missing"), "run-2")
        assert not log_skip(conn, second, sha, EvidenceSkip("file-missing"), "run-3"), "once per card and bytes"
    assert rows(db_url, "SELECT card_id, run_id FROM card_scan_log ORDER BY id") == [(first, "run-1"),
                                                                                       (second, "run-2")]
