"""The catalogue's version moves with every change to printings or sets and with nothing else, and Stage C's kept
`ReadCatalog` is read again after an import that changed the catalogue (never a stale one kept as current)."""

from __future__ import annotations

from stage_e_dagster.db.catalog.importer import import_catalog, store_printed_totals
from stage_e_dagster.db.catalog.read import catalog_version, current_read_catalog
from stage_e_dagster.demo.all_cards import all_cards, write_sets_file
from stage_e_dagster.demo.catalog import write_catalog
from testkit.sql import execute


def _version(engine) -> int:
    with engine.connect() as conn:
        return catalog_version(conn)


def _catalog(engine):
    with engine.connect() as conn:
        return current_read_catalog(conn)


def test_an_import_that_changes_the_catalogue_moves_the_version_and_an_unchanged_one_does_not(db_engine, tmp_path):
    cards = list(all_cards(200, seed=4))
    path = tmp_path / "cards.json"
    write_catalog(path, cards)
    empty = _version(db_engine)
    import_catalog(db_engine, path)
    first = _version(db_engine)
    import_catalog(db_engine, path)
    assert first != empty and _version(db_engine) == first
    cards[0]["artist"] = "Someone Else"
    write_catalog(path, cards)
    import_catalog(db_engine, path)
    assert _version(db_engine) != first


def test_sets_files_and_direct_writes_move_the_version(db_engine, db_url, tmp_path):
    path, sets = tmp_path / "cards.json", tmp_path / "sets.json"
    write_catalog(path, all_cards(200, seed=4))
    write_sets_file(sets, 200, seed=4)
    summary = import_catalog(db_engine, path)
    before = _version(db_engine)
    with db_engine.begin() as conn:
        store_printed_totals(conn, sets, summary)
    assert summary.totals_stored and _version(db_engine) != before
    before = _version(db_engine)
    assert execute(db_url, "DELETE FROM printing WHERE id = (SELECT min(id) FROM printing)") == 1
    assert _version(db_engine) != before
    before = _version(db_engine)
    assert execute(db_url, "UPDATE printing SET artist = artist WHERE false") == 0
    assert _version(db_engine) == before


def test_the_kept_read_catalogue_is_reused_until_an_import_changes_it(db_engine, tmp_path):
    cards = list(all_cards(300, seed=6))
    first, later = cards[:200], cards[200:]
    path = tmp_path / "cards.json"
    write_catalog(path, first)
    import_catalog(db_engine, path)
    kept = _catalog(db_engine)
    assert _catalog(db_engine) is kept
    added = next(c for c in later if c["name"] not in {f["name"] for f in first})
    assert kept.printings_of(added["name"]) == ()
    write_catalog(path, later)
    import_catalog(db_engine, path)
    fresh = _catalog(db_engine)
    assert fresh is not kept and fresh.printings_of(added["name"])
    assert _catalog(db_engine) is fresh
