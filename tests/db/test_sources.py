"""Sources: the listing the inbox sensor compares, syncs that read only what changed, the `card_sources` asset, the
`stage-e sources` commands and the demo's inbox feeder."""

from __future__ import annotations

import os
import shutil
import time

from click.testing import CliRunner
from dagster import AssetKey, materialize

from stage_e_dagster.assets.sources import card_sources
from stage_e_dagster.cli import main
from stage_e_dagster.db.intake import ingest
from stage_e_dagster.db.intake.sources import add_source, list_sources, sync_directory
from stage_e_dagster.demo.feed import Feeder, pending
from stage_e_dagster.domain.scan_files import list_images
from stage_e_dagster.job_contracts import SyncSpec
from stage_e_dagster.resources.database import AppDatabase
from testkit.corpus import card_files, small_scan

TRUST_WAIT = 2.1
"""A file written less than `db.intake.sources.TRUST_MARGIN_SECONDS` before a sync started is read again by the next
one."""


def test_the_listing_changes_when_files_appear_change_or_vanish_and_only_then(tmp_path):
    root = tmp_path / "inbox"
    assert list_images(root) is None, "a missing directory is not an empty one"
    root.mkdir()
    empty = list_images(root)
    assert empty is not None and (empty.files, empty.total_bytes) == (0, 0)
    first = small_scan(root / "a" / "Opt (1).png")
    (root / "notes.txt").write_text("not a scan")
    os.symlink(first, root / "link.png")
    one = list_images(root)
    assert one.files == 1 and one.digest != empty.digest
    assert list_images(root) == one, "nothing changed: the same listing"
    small_scan(root / "b.png")
    two = list_images(root)
    assert two.files == 2 and two.digest != one.digest
    small_scan(first, shade=90, size=(70, 90))
    assert list_images(root).digest != two.digest
    (root / "b.png").unlink()
    assert list_images(root).files == 1


def test_a_quick_sync_reads_only_what_changed_since_the_last_one(db_url, db_engine, tmp_path, monkeypatch):
    root = tmp_path / "inbox"
    for index in range(4):
        small_scan(root / f"card {index}.png", shade=10 * index)
    time.sleep(TRUST_WAIT)  # files written within the margin before a sync are read again by the next one
    with db_engine.begin() as conn:
        source, moved = add_source(conn, "inbox", root)
    assert moved is None and source.synced_at is None
    read: list[str] = []
    real = ingest._fingerprint
    monkeypatch.setattr(ingest, "_fingerprint", lambda item, *a: read.append(item.identifier) or real(item, *a))

    first = sync_directory(db_engine, source)
    assert (first.status, first.summary.new, len(read)) == ("synced", 4, 4)
    with db_engine.connect() as conn:
        source = list_sources(conn, ["inbox"])[0]
    assert source.synced_at is not None and source.synced_listing == list_images(root).digest

    read.clear()
    small_scan(root / "card 4.png", shade=200)
    again = sync_directory(db_engine, source)
    assert (again.summary.new, again.summary.unchanged, again.summary.trusted) == (1, 4, 4)
    assert read == ["card 4.png"], "only the new file is read"

    with db_engine.connect() as conn:
        source = list_sources(conn, ["inbox"])[0]
    read.clear()
    # a replacement of the same size with an old modification time (as `cp -p` leaves it): its inode time is new
    replacement = small_scan(tmp_path / "replacement.png", shade=0, note="b")
    assert replacement.stat().st_size == (root / "card 0.png").stat().st_size
    os.utime(replacement, (time.time() - 600, time.time() - 600))
    shutil.copy2(replacement, root / "card 0.png")
    (root / "card 3.png").unlink()
    third = sync_directory(db_engine, source)
    # card 4 was written within the margin before the previous sync started, so it is read once more
    assert read == ["card 0.png", "card 4.png"]
    assert (third.summary.changed, third.summary.vanished) == (1, ["card 3.png"])
    assert card_files(db_url)["card 3.png"][1], "the vanished file's card is marked missing"

    read.clear()
    with db_engine.connect() as conn:
        source = list_sources(conn, ["inbox"])[0]
    full = sync_directory(db_engine, source, full=True)
    assert sorted(read) == ["card 0.png", "card 1.png", "card 2.png", "card 4.png"] and full.summary.trusted == 0


def test_a_missing_directory_is_left_alone(db_url, db_engine, tmp_path):
    root = tmp_path / "mount"
    small_scan(root / "a.png")
    with db_engine.begin() as conn:
        source, _ = add_source(conn, "mount", root)
    assert sync_directory(db_engine, source).summary.new == 1
    shutil.rmtree(root)
    with db_engine.connect() as conn:
        source = list_sources(conn, ["mount"])[0]
    gone = sync_directory(db_engine, source)
    assert gone.status == "unavailable"
    assert card_files(db_url) == {"a.png": (card_files(db_url)["a.png"][0], False)}, "no card was marked missing"


def test_the_card_sources_asset_syncs_the_sources_and_tells_what_it_did(db_url, db_engine, tmp_path):
    small_scan(tmp_path / "one" / "a.png")
    small_scan(tmp_path / "one" / "b.png", shade=90)
    (tmp_path / "one" / "broken.png").write_bytes(b"not really a png")
    small_scan(tmp_path / "two" / "c.png", shade=150)
    with db_engine.begin() as conn:
        add_source(conn, "one", tmp_path / "one")
        add_source(conn, "two", tmp_path / "two")
        add_source(conn, "gone", tmp_path / "nowhere-yet")
    # In-memory Dagster storage: it cannot matter here, the test reads only this run's own result.
    result = materialize([card_sources], resources={"database": AppDatabase(database_url=db_url)},
                         run_config=SyncSpec(("gone", "one")).run_config())
    assert result.success
    (event,) = [e for e in result.get_asset_materialization_events() if e.asset_key == AssetKey("card_sources")]
    meta = {key: value.value for key, value in event.materialization.metadata.items()}
    assert (meta["new"], meta["unreadable"], meta["sources_synced"], meta["sources_unavailable"]) == (3, 1, 1, 1)
    rows = {row.data["source"]: row.data for row in meta["sources"].records}
    assert rows["one"]["status"] == "synced" and rows["one"]["new"] == 3 and rows["gone"]["status"] == "unavailable"
    assert "broken.png" in meta["problems"]
    assert set(card_files(db_url)) == {"a.png", "b.png", "broken.png"}, "source two was not asked for"


def test_stage_e_sources_add_list_and_sync(db_url, db_engine, tmp_path, monkeypatch):
    monkeypatch.setenv("STAGE_E_DATABASE_URL", db_url)
    small_scan(tmp_path / "first" / "a.png")
    small_scan(tmp_path / "second" / "a.png")
    runner = CliRunner()
    added = runner.invoke(main, ["sources", "add", str(tmp_path / "first"), "--key", "scans"])
    assert added.exit_code == 0 and f"source scans: {tmp_path / 'first'}" in added.output
    synced = runner.invoke(main, ["sources", "sync"])
    assert synced.exit_code == 0 and "scans: 1 new" in synced.output
    listed = runner.invoke(main, ["sources", "list"])
    assert "scans" in listed.output and "1 cards (0 missing)" in listed.output and "synced never" not in listed.output
    moved = runner.invoke(main, ["sources", "add", str(tmp_path / "second"), "--key", "scans"])
    assert f"moved from {tmp_path / 'first'}" in moved.output
    with db_engine.connect() as conn:
        assert list_sources(conn, ["scans"])[0].synced_at is None, "a moved source is read in full again"
    unknown = runner.invoke(main, ["sources", "sync", "nope"])
    assert unknown.exit_code != 0 and "no source registered as nope" in unknown.output


def test_the_feeder_copies_in_waves_and_a_second_run_finds_nothing_to_do(tmp_path):
    for index in range(5):
        small_scan(tmp_path / "scans" / f"{index:03d}" / f"c{index}.png", shade=index * 30)
    inbox = tmp_path / "inbox"
    said: list[str] = []
    feeder = Feeder(tmp_path / "scans", inbox, wave=2, every=0.0, say=said.append)
    feeder.start()
    deadline = time.monotonic() + 10
    while feeder.running() and time.monotonic() < deadline:
        time.sleep(0.05)
    feeder.stop()
    assert feeder.copied == 5 and len([s for s in said if "wave" in s]) == 3
    assert pending(tmp_path / "scans", inbox) == [] and list_images(inbox).files == 5
    assert not list(inbox.rglob(".*.part")), "no half-written file is left behind"
    again = Feeder(tmp_path / "scans", inbox, wave=2, every=0.0, say=said.append)
    again.start()
    again.stop()
    assert again.copied == 0 and "already" in said[-1]



def test_moving_one_source_leaves_another_sources_sync_alone(db_url, db_engine, tmp_path):
    """Two synced sources: moving `one` makes it read in full at its next sync, `two` keeps its last sync."""
    small_scan(tmp_path / "one" / "a.png")
    small_scan(tmp_path / "two" / "b.png", shade=90)
    with db_engine.begin() as conn:
        one, _ = add_source(conn, "one", tmp_path / "one")
        two, _ = add_source(conn, "two", tmp_path / "two")
    assert sync_directory(db_engine, one).status == sync_directory(db_engine, two).status == "synced"
    with db_engine.connect() as conn:
        synced = {s.key: (s.synced_at, s.synced_listing) for s in list_sources(conn)}
    assert all(at is not None and listing for at, listing in synced.values())
    with db_engine.begin() as conn:
        assert add_source(conn, "one", tmp_path / "two")[1] == str((tmp_path / "one").resolve())
    with db_engine.connect() as conn:
        after = {s.key: (s.synced_at, s.synced_listing) for s in list_sources(conn)}
    assert after == {"one": (None, None), "two": synced["two"]}
