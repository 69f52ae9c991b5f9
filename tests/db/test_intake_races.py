"""The sources' sync locks, raced: two syncs of one source released by a barrier meet at the `card` table (a gate
holds it, `testkit.race`), and the cards and the syncs' own counts are the oracle.

- a directory: two syncs take turns on the source's advisory lock, so each file is a new card once (the second
  sync finds them all stored);
- a remote source: a sync that must not wait (the `source_inbox` tick's, with a budget) finds the source busy
  while another lists it, and lists nothing;
- two registrations of one remote key at once leave one source row.
"""

from __future__ import annotations

from types import SimpleNamespace

from stage_e_dagster.control.intake import sync_source
from stage_e_dagster.db.core.engine import get_engine
from stage_e_dagster.db.intake.remote_sync import list_s3
from stage_e_dagster.db.intake.sources import add_remote_source, add_source, list_sources
from stage_e_dagster.domain.remote import Listed, parse_location
from stage_e_dagster.remote.listing import sync_remote
from testkit.corpus import small_scan
from testkit.race import Race, gate, pile_up, raced_behind_gate
from testkit.sql import rows

CARD_GATE = "LOCK TABLE card IN SHARE ROW EXCLUSIVE MODE"


def test_two_syncs_of_one_directory_count_each_file_new_once(db_url, tmp_path):
    for i in range(4):
        small_scan(tmp_path / "scans" / f"Card {i}.png", shade=30 + 20 * i)
    engine = get_engine(db_url)
    with engine.begin() as conn:
        source, _ = add_source(conn, "inbox", tmp_path / "scans")
    syncs = raced_behind_gate(db_url, CARD_GATE, None, *[lambda: sync_source(engine, source, full=True)] * 2)
    summaries = [o.result().summary for o in syncs]
    assert sorted(s.new for s in summaries) == [0, 4], "the second sync finds every file stored by the first"
    assert rows(db_url, "SELECT count(*), count(DISTINCT identifier) FROM card") == [(4, 4)]


def _store(keys: list[str]):
    """A stand-in store client whose listing is one page of `keys` (no request leaves the process)."""
    def pages(after):
        yield [Listed(identifier=key, token=f"etag-{key}", size=10) for key in keys if after is None or key > after]
    return SimpleNamespace(pages=pages)


def test_a_sync_that_must_not_wait_finds_the_source_busy_while_another_lists_it(db_url):
    engine = get_engine(db_url)
    with engine.begin() as conn:
        source, _ = add_remote_source(conn, "bucket", parse_location("s3://scans/in"))
    client = _store(["a.png", "b.png", "c.png"])
    with gate(db_url, CARD_GATE) as holder:
        listing = Race(lambda: sync_remote(engine, source, open_store=lambda row: client))
        pile_up(db_url, holder, 1, "the first sync's listing")
        (tick,) = Race(lambda: sync_remote(engine, source, budget_seconds=5.0, open_store=lambda row: client)).join()
        assert (tick.result().status, tick.result().summary.new) == ("busy", 0)
    (first,) = listing.join()
    assert (first.result().status, first.result().summary.new) == ("synced", 3)
    assert rows(db_url, "SELECT count(*) FROM card") == [(3,)]


def test_two_registrations_of_one_remote_key_at_once_leave_one_source(db_url):
    engine = get_engine(db_url)

    def register(location: str):
        def racer():
            with engine.begin() as conn:
                return add_remote_source(conn, "bucket", parse_location(location))[0].key
        return racer

    added = raced_behind_gate(db_url, "LOCK TABLE source IN SHARE ROW EXCLUSIVE MODE", None,
                              register("s3://scans/a"), register("s3://scans/b"))
    assert [o.result() for o in added] == ["bucket", "bucket"]
    with engine.connect() as conn:
        (row,) = list_sources(conn, ["bucket"])
    assert row.location in ("s3://scans/a", "s3://scans/b")


def test_two_listing_passes_of_one_bucket_at_once_store_each_object_once(db_url):
    """Below the source's lock (which `sync_remote` holds), the pass's cursor row is taken `FOR UPDATE` and the
    listed objects are upserted: two passes that meet anyway store each object once and both end the pass."""
    engine = get_engine(db_url)
    with engine.begin() as conn:
        source, _ = add_remote_source(conn, "bucket", parse_location("s3://scans/in"))
    client = _store(["a.png", "b.png", "c.png"])
    passes = raced_behind_gate(db_url, "SELECT 1 FROM source WHERE id = %s FOR UPDATE", (source.id,),
                               *[lambda: list_s3(engine, source.id, client.pages)] * 2)
    assert [o.result().complete for o in passes] == [True, True]
    assert rows(db_url, "SELECT count(*), count(DISTINCT identifier) FROM card") == [(3, 3)]
    assert rows(db_url, "SELECT list_cursor FROM source WHERE id = %s", (source.id,)) == [(None,)]
