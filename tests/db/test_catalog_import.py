"""Catalogue import: streamed, idempotent on the Scryfall id, malformed records reported and skipped."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import select

from stage_e_dagster.db.catalog.importer import CatalogFileError, import_catalog, store_symbol_hashes
from stage_e_dagster.db.core.engine import session_scope
from stage_e_dagster.db.core.models import Expansion, Printing
from stage_e_dagster.demo.catalog import generate_catalog, write_catalog
from stage_e_dagster.demo.symbols import render_set_symbol
from testkit.sql import scalar


def test_import_is_idempotent_and_fills_expansions(db_url, db_engine, tmp_path):
    cards = generate_catalog(300, seed=3)
    path = tmp_path / "cat.json"
    write_catalog(path, cards)
    first = import_catalog(db_engine, path)
    again = import_catalog(db_engine, path)
    assert first.printings == again.printings == 300
    assert scalar(db_url, "SELECT count(*) FROM printing") == 300
    codes = {c["set"] for c in cards}
    with session_scope(db_engine) as s:
        stored = {e.code: e for e in s.scalars(select(Expansion))}
    assert set(stored) == codes
    one = cards[0]
    expected_release = min(c["released_at"] for c in cards if c["set"] == one["set"])
    assert stored[one["set"]].released_at.isoformat() == expected_release


def test_changed_record_updates_in_place(db_url, db_engine, tmp_path):
    cards = generate_catalog(20, seed=1)
    path = tmp_path / "cat.json"
    write_catalog(path, cards)
    import_catalog(db_engine, path)
    cards[0]["artist"] = "Someone Else"
    write_catalog(path, cards)
    import_catalog(db_engine, path)
    with session_scope(db_engine) as s:
        row = s.scalars(select(Printing).where(Printing.scryfall_id == cards[0]["id"])).one()
    assert row.artist == "Someone Else"
    assert scalar(db_url, "SELECT count(*) FROM printing") == 20


def test_malformed_records_are_reported_with_their_index_and_skipped(db_url, db_engine, tmp_path):
    cards = generate_catalog(10, seed=2)
    cards.insert(3, {"id": "x", "name": "No Set"})
    cards.insert(5, "not an object")
    cards.insert(7, dict(cards[0], id="bad-date", released_at="yesterday"))
    path = tmp_path / "cat.json"
    path.write_text(json.dumps(cards))
    seen = []
    summary = import_catalog(db_engine, path, on_malformed=lambda i, why: seen.append((i, why)))
    assert [i for i, _ in seen] == [3, 5, 7]
    assert "set" in seen[0][1] and "released_at" in seen[2][1]
    assert summary.printings == 10
    assert scalar(db_url, "SELECT count(*) FROM printing") == 10


def test_multi_face_cards_keep_their_face_names(db_engine, tmp_path):
    card = dict(generate_catalog(1, seed=0)[0], name="Front // Back", layout="transform",
                card_faces=[{"name": "Front"}, {"name": "Back"}])
    path = tmp_path / "cat.json"
    path.write_text(json.dumps([card]))
    import_catalog(db_engine, path)
    with session_scope(db_engine) as s:
        row = s.scalars(select(Printing)).one()
    assert row.face_names == ["Front", "Back"] and row.layout == "transform"


def test_truncated_file_fails_loudly_after_committing_what_came_before(db_url, db_engine, tmp_path):
    cards = generate_catalog(2500, seed=4)
    path = tmp_path / "cat.json"
    text = json.dumps(cards)
    path.write_text(text[: int(len(text) * 0.9)])
    with pytest.raises(CatalogFileError, match="not valid JSON"):
        import_catalog(db_engine, path)
    assert scalar(db_url, "SELECT count(*) FROM printing") >= 2000


def test_a_file_that_is_not_an_array_is_refused(db_engine, tmp_path):
    path = tmp_path / "cat.json"
    path.write_text('{"object": "list"}')
    with pytest.raises(CatalogFileError):
        import_catalog(db_engine, path)


def test_symbols_store_reference_hashes(db_engine, tmp_path):
    cards = generate_catalog(30, seed=5)
    path = tmp_path / "cat.json"
    write_catalog(path, cards)
    summary = import_catalog(db_engine, path)
    symbols = tmp_path / "symbols"
    symbols.mkdir()
    codes = sorted({c["set"] for c in cards})
    for code in codes[1:]:
        render_set_symbol(code).save(symbols / f"{code}.png")
    render_set_symbol(codes[0]).save(symbols / f"{codes[0]}.png", format="TIFF")  # a TIFF named .png: not decoded
    render_set_symbol("zzz").save(symbols / "zzz.png")
    (symbols / "bad.png").write_bytes(b"not a png")
    store_symbol_hashes(db_engine, symbols, summary)
    assert summary.symbols_stored == len(codes) - 1
    assert summary.symbols_unknown_set == ["zzz"]
    assert sorted(summary.symbols_unreadable) == sorted(["bad.png", f"{codes[0]}.png"])
    with session_scope(db_engine) as s:
        hashes = {e.code: e.symbol_phash for e in s.scalars(select(Expansion))}
    assert all(hashes[c] is not None for c in codes[1:]) and hashes[codes[0]] is None
