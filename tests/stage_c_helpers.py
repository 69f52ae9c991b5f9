"""Shared set-up for Stage C tests: a catalogue, rendered scans on disk, ingested as cards."""

from __future__ import annotations

from pathlib import Path

from stage_e_dagster.db.catalog.importer import import_catalog, store_symbol_hashes
from stage_e_dagster.db.core.engine import get_engine
from stage_e_dagster.db.intake.ingest import ingest_directory
from stage_e_dagster.demo.catalog import generate_catalog, write_catalog
from stage_e_dagster.demo.render import render_scan
from stage_e_dagster.demo.symbols import render_set_symbol


def seed_scans(db_url: str, root: Path, cards: int = 6, printings: int = 30, seed: int = 7) -> dict[str, dict]:
    """Import a catalogue and its symbols, render `cards` scans under root/scans, ingest them.
    Returns identifier -> catalogue card."""
    catalogue = generate_catalog(printings, seed=seed)
    write_catalog(root / "catalog.json", catalogue)
    engine = get_engine(db_url)
    summary = import_catalog(engine, root / "catalog.json")
    symbols = root / "symbols"
    symbols.mkdir(exist_ok=True)
    for code in {c["set"] for c in catalogue}:
        render_set_symbol(code).save(symbols / f"{code}.png")
    store_symbol_hashes(engine, symbols, summary)
    scans = root / "scans"
    scans.mkdir(exist_ok=True)
    truth: dict[str, dict] = {}
    for i in range(cards):
        card = catalogue[(i * 7) % len(catalogue)]
        name = f"{card['name'].split(' // ')[0]} [{card['set'].upper()}] ({i}).png"
        render_scan(card, long_side=1040, bleed=bool(i % 2), seed=i).save(scans / name)
        truth[name] = card
    ingest_directory(engine, scans, "test")
    return truth


def card_ids(db_url: str) -> dict[str, int]:
    with get_engine(db_url).connect() as conn:
        return dict(conn.exec_driver_sql("SELECT identifier, id FROM card").all())


def rows(db_url: str, sql: str) -> list[tuple]:
    with get_engine(db_url).connect() as conn:
        return [tuple(r) for r in conn.exec_driver_sql(sql).all()]
