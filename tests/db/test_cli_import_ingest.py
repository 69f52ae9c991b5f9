"""The README's data commands, as an operator runs them: `stage-e catalog import` and `stage-e ingest`."""

from __future__ import annotations

import json

from click.testing import CliRunner
from PIL import Image

from stage_e_dagster.cli import main
from stage_e_dagster.demo.catalog import generate_catalog
from stage_e_dagster.demo.symbols import render_set_symbol


def test_catalog_import_reports_bad_records_and_symbols(db_url, tmp_path, monkeypatch):
    monkeypatch.setenv("STAGE_E_DATABASE_URL", db_url)
    cards = generate_catalog(40, seed=9)
    cards.insert(2, {"id": "broken"})
    (tmp_path / "cat.json").write_text(json.dumps(cards))
    symbols = tmp_path / "symbols"
    symbols.mkdir()
    code = cards[0]["set"]
    render_set_symbol(code).save(symbols / f"{code}.png")
    render_set_symbol("qqq").save(symbols / "qqq.png")
    result = CliRunner().invoke(main, ["catalog", "import", str(tmp_path / "cat.json"), "--symbols", str(symbols)])
    assert result.exit_code == 0, result.output
    assert "record 2 skipped: missing name, set, collector_number" in result.output
    assert "40 printings in" in result.output and "1 malformed; 1 set symbols stored" in result.output
    assert "symbol qqq.png names no imported set" in result.output


def test_catalog_import_of_a_broken_file_fails_with_a_message(db_url, tmp_path, monkeypatch):
    monkeypatch.setenv("STAGE_E_DATABASE_URL", db_url)
    (tmp_path / "cat.json").write_text('[{"id": "a", "name": "A", "set": "m20", "collector_number": "1"}, {"id"')
    result = CliRunner().invoke(main, ["catalog", "import", str(tmp_path / "cat.json")])
    assert result.exit_code == 1 and "not valid JSON after record" in result.output


def test_ingest_prints_a_summary_and_names_bad_files(db_url, tmp_path, monkeypatch):
    monkeypatch.setenv("STAGE_E_DATABASE_URL", db_url)
    scans = tmp_path / "scans"
    scans.mkdir()
    Image.new("RGB", (63, 88), "red").save(scans / "Opt [XLN].png")
    (scans / "broken.jpg").write_bytes(b"\xff\xd8\xff garbage")
    runner = CliRunner()
    first = runner.invoke(main, ["ingest", str(scans), "--source", "inbox"])
    assert first.exit_code == 0, first.output
    assert "unreadable image: broken.jpg" in first.output
    assert "ingest inbox: 2 new, 0 changed, 0 unchanged, 1 unreadable, 0 refused, 0 vanished" in first.output
    again = runner.invoke(main, ["ingest", str(scans), "--source", "inbox"])
    assert "ingest inbox: 0 new, 0 changed, 2 unchanged" in again.output


def test_catalog_import_with_a_sets_file_stores_printed_totals_the_reader_then_knows(db_url, db_engine, tmp_path,
                                                                                    monkeypatch):
    """`--sets` takes Scryfall's `/sets` list: each known set's printed size lands on its expansion and in the
    collector reader's catalogue; a set without a printed size stays unknown, an unknown set is reported."""
    from sqlalchemy import text

    from stage_e_dagster.db.catalog.read import read_catalog
    from stage_e_dagster.demo.catalog import set_printed_total, write_sets

    monkeypatch.setenv("STAGE_E_DATABASE_URL", db_url)
    cards = generate_catalog(40, seed=9)
    (tmp_path / "cat.json").write_text(json.dumps(cards))
    write_sets(tmp_path / "sets.json", cards)
    sets = json.loads((tmp_path / "sets.json").read_text())
    first, *rest = sets["data"]
    del first["printed_size"]
    sets["data"] = [first, *rest, {"object": "set", "code": "zzz", "name": "Nowhere", "printed_size": 99}]
    (tmp_path / "sets.json").write_text(json.dumps(sets))

    result = CliRunner().invoke(main, ["catalog", "import", str(tmp_path / "cat.json"),
                                       "--sets", str(tmp_path / "sets.json")])
    assert result.exit_code == 0, result.output
    assert f"; {len(rest)} printed set sizes stored" in result.output
    assert "1 sets in sets.json name no imported set" in result.output
    with db_engine.connect() as conn:
        stored = dict(conn.execute(text("SELECT code, printed_total FROM expansion")).all())
    assert stored == {first["code"]: None, **{s["code"]: set_printed_total(s["code"]) for s in rest}}
    with db_engine.connect() as conn:
        assert read_catalog(conn).totals == {s["code"]: set_printed_total(s["code"]) for s in rest}

    (tmp_path / "bad.json").write_text('{"object": "list", "data": ')
    broken = CliRunner().invoke(main, ["catalog", "import", str(tmp_path / "cat.json"),
                                       "--sets", str(tmp_path / "bad.json")])
    assert broken.exit_code == 1 and "bad.json is not valid JSON" in broken.output
