"""Catalogue import keeps its memory bounded on a hostile file: a record too big or nested too deep, or a flood of
malformed records, stops the import with a `CatalogLimitError` that says which (after committing what came before)."""

from __future__ import annotations

import json

import pytest

from stage_e_dagster.db.catalog import importer as catalog_import
from stage_e_dagster.db.catalog.importer import CatalogLimitError, import_catalog
from stage_e_dagster.demo.catalog import generate_catalog


def _write(path, good: int, hostile: str) -> None:
    records = [json.dumps(card) for card in generate_catalog(good, seed=4)]
    path.write_text("[" + ",".join([*records, hostile]) + "]")


def test_deep_nesting_is_refused_before_the_parser_builds_it(db_engine, tmp_path):
    # 20,000 levels in 40 KB took the parser's prefix paths to about 1 GB before the limit.
    path = tmp_path / "deep.json"
    _write(path, 3, '{"id": "x", "name": "Opt", "set": "xln", "collector_number": "1", "all_parts": '
           + "[" * 20_000 + "]" * 20_000 + "}")
    with pytest.raises(CatalogLimitError, match=r"record 3 is nested deeper than 32 levels; 3 printings"):
        import_catalog(db_engine, path)


def test_a_record_bigger_than_the_limit_is_refused(db_engine, tmp_path, monkeypatch):
    monkeypatch.setattr(catalog_import, "MAX_RECORD_BYTES", 200_000)
    path = tmp_path / "giant.json"
    _write(path, 2, '{"id": "x", "name": "Opt", "set": "xln", "collector_number": "1", "oracle_text": "'
           + "x" * 1_000_000 + '"}')
    with pytest.raises(CatalogLimitError, match="record 2 spans more than 200000 bytes"):
        import_catalog(db_engine, path)


def test_a_flood_of_malformed_records_stops_the_import(db_engine, tmp_path, monkeypatch):
    monkeypatch.setattr(catalog_import, "MAX_MALFORMED", 50)
    path = tmp_path / "flood.json"
    path.write_text("[" + ",".join(["1"] * 200) + "]")
    with pytest.raises(CatalogLimitError, match="more than 50 malformed records"):
        import_catalog(db_engine, path)


def test_a_normal_catalogue_with_nested_faces_still_imports(db_engine, tmp_path):
    path = tmp_path / "ok.json"
    _write(path, 30, '{"id": "y", "name": "A // B", "set": "xln", "collector_number": "2", '
           '"card_faces": [{"name": "A", "image_uris": {"png": "u"}}, {"name": "B"}], "prices": {"usd": null}}')
    summary = import_catalog(db_engine, path)
    assert summary.printings == 31 and not summary.malformed
