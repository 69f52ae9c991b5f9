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
