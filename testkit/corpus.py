"""Corpus seeding: a generated catalogue and card scans, imported and ingested, as the operator's commands do it.

In process (`target` is a database URL or an Engine):
- `demo_corpus`: the demo generator's data set (catalogue, set symbols, sets file, scans, some degraded),
  imported with its symbols and printed totals, its scans ingested;
- `rendered_scans`: a catalogue and `cards` clean scans rendered at one size with known names, ingested; returns
  each scan's printing (the truth a Stage C test compares evidence with);
- `demo_catalogue`: a generated catalogue only, with a random reference symbol hash per set (no scans).

Through the `stage-e` commands of a `testkit.live.Home` (real processes, as an operator types them):
`demo_corpus_cli`.
"""

from __future__ import annotations

import functools
import io
import json
import random
from pathlib import Path
from typing import Any

from PIL import Image
from sqlalchemy import Engine, select, text, update

from stage_e_dagster.db.catalog.importer import (
    ImportSummary,
    import_catalog,
    store_printed_totals,
    store_symbol_hashes,
)
from stage_e_dagster.db.core.engine import get_engine, session_scope
from stage_e_dagster.db.core.models import Expansion
from stage_e_dagster.db.intake.ingest import ingest_directory
from stage_e_dagster.demo.catalog import generate_catalog, write_catalog, write_sets
from stage_e_dagster.demo.render import render_scan
from stage_e_dagster.demo.symbols import render_set_symbol


def engine_of(target: Engine | str) -> Engine:
    return target if isinstance(target, Engine) else get_engine(target)


def load_catalogue(target: Engine | str, root: Path, sets: bool = False) -> ImportSummary:
    """`stage-e catalog import root/catalog.json --symbols root/symbols [--sets root/sets.json]`, in process."""
    engine = engine_of(target)
    summary = import_catalog(engine, root / "catalog.json")
    if (root / "symbols").is_dir():
        store_symbol_hashes(engine, root / "symbols", summary)
    if sets:
        with engine.begin() as conn:
            store_printed_totals(conn, root / "sets.json", summary)
    return summary


def ingest(target: Engine | str, scans: Path, source: str) -> None:
    """`stage-e ingest scans --source source`, in process."""
    ingest_directory(engine_of(target), scans, source)


def demo_corpus(target: Engine | str, root: Path, cards: int = 60, printings: int = 80, seed: int = 11,
                degraded: float = 0.2, workers: int = 2, source: str = "demo", sets: bool = False,
                kinds: bool = False) -> Path:
    """The demo data set under `root` (`stage-e demo generate`, with `--kinds` when `kinds`: every kind of upload in
    the shares of `demo.forms`), imported (with the sets' printed totals when `sets`) and ingested; returns
    `root`."""
    from stage_e_dagster.demo.generate import generate

    generate(root, printings=printings, cards=cards, seed=seed, degraded_fraction=degraded, workers=workers,
             kinds=kinds)
    load_catalogue(target, root, sets)
    ingest(target, root / "scans", source)
    return root


def write_catalogue(root: Path, printings: int, seed: int) -> list[dict[str, Any]]:
    """A generated catalogue under `root`: catalog.json, sets.json (the sets' printed sizes) and
    symbols/<set>.png."""
    catalogue = generate_catalog(printings, seed=seed)
    root.mkdir(parents=True, exist_ok=True)
    write_catalog(root / "catalog.json", catalogue)
    write_sets(root / "sets.json", catalogue)
    (root / "symbols").mkdir(exist_ok=True)
    for code in sorted({c["set"] for c in catalogue}):
        render_set_symbol(code).save(root / "symbols" / f"{code}.png")
    return catalogue


@functools.lru_cache(maxsize=256)
def _clean_scan_file(card_json: str, long_side: int, bleed: bool, seed: int, image_format: str) -> bytes:
    """The file of one clean scan, rendered once per process: many tests draw the same scans of the same small
    catalogue, and rendering and encoding are deterministic in these arguments, so a repeat is served from memory."""
    buffer = io.BytesIO()
    render_scan(json.loads(card_json), long_side=long_side, bleed=bleed, seed=seed).save(buffer, image_format)
    return buffer.getvalue()


def clean_scan(path: Path, card: dict[str, Any], long_side: int, bleed: bool = False, seed: int = 0) -> None:
    """Write a clean scan of `card` to `path`, in the format its suffix names (`render_scan`, cached per process)."""
    image_format = Image.registered_extensions()[path.suffix.lower()]
    path.write_bytes(_clean_scan_file(json.dumps(card, sort_keys=True), long_side, bleed, seed, image_format))


def rendered_scans(target: Engine | str, root: Path, cards: int = 6, printings: int = 30, seed: int = 7,
                   long_side: int = 1040, source: str = "test") -> dict[str, dict[str, Any]]:
    """A catalogue and `cards` clean scans (`long_side` px, every other one with bleed) under root/scans,
    imported and ingested. Returns identifier -> the catalogue card the scan shows."""
    catalogue = write_catalogue(root, printings, seed)
    load_catalogue(target, root)
    scans = root / "scans"
    scans.mkdir(exist_ok=True)
    truth: dict[str, dict[str, Any]] = {}
    for i in range(cards):
        card = catalogue[(i * 7) % len(catalogue)]
        name = f"{card['name'].split(' // ')[0]} [{card['set'].upper()}] ({i}).png"
        clean_scan(scans / name, card, long_side, bleed=bool(i % 2), seed=i)
        truth[name] = card
    ingest(target, scans, source)
    return truth


def named_scans(target: Engine | str, root: Path, names: dict[str, int], printings: int = 30, seed: int = 7,
                long_side: int = 900) -> list[dict[str, Any]]:
    """A catalogue imported (no symbols), and one clean scan per path in `names`, relative to `root`: the value
    picks the printing (its index in the catalogue) and the render seed. Not ingested: the caller arranges the
    files (copies, junk) first."""
    catalogue = generate_catalog(printings, seed=seed)
    root.mkdir(parents=True, exist_ok=True)
    write_catalog(root / "catalog.json", catalogue)
    load_catalogue(target, root)
    for name, index in names.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        clean_scan(path, catalogue[index], long_side, seed=index)
    return catalogue


def demo_catalogue(target: Engine | str, root: Path, printings: int = 600, seed: int = 11) -> list[dict[str, Any]]:
    """A generated catalogue imported into `printing`/`expansion`, with a random reference symbol hash per set
    (what `catalog import --symbols` stores), and no scans."""
    catalogue = generate_catalog(printings, seed)
    root.mkdir(parents=True, exist_ok=True)
    write_catalog(root / "catalog.json", catalogue)
    engine = engine_of(target)
    import_catalog(engine, root / "catalog.json")
    rng = random.Random(seed)
    with session_scope(engine) as s:
        for code in s.scalars(select(Expansion.code)).all():
            s.execute(update(Expansion).where(Expansion.code == code).values(symbol_phash=rng.getrandbits(64)
                                                                             - (1 << 63)))
    return catalogue


def small_scan(path: Path, shade: int = 40, size: tuple[int, int] = (63, 88), note: str = "a") -> Path:
    """A small PNG file at `path` (its pixels follow `shade`; a one-letter `note` changes its bytes, not its
    length): a file for intake tests, not one to read text from."""
    from PIL import Image
    from PIL.PngImagePlugin import PngInfo

    path.parent.mkdir(parents=True, exist_ok=True)
    info = PngInfo()
    info.add_text("note", note)
    Image.new("RGB", size, (shade, 255 - shade, (shade * 7) % 256)).save(path, pnginfo=info)
    return path


def card_ids(target: Engine | str) -> dict[str, int]:
    """identifier -> card id of every card."""
    with engine_of(target).connect() as conn:
        return dict(conn.execute(text("SELECT identifier, id FROM card")).all())


def card_files(target: Engine | str) -> dict[str, tuple[str, bool]]:
    """identifier -> (content hash, whether the file is missing) of every card."""
    with engine_of(target).connect() as conn:
        found = conn.execute(text("SELECT identifier, content_sha256, missing_since IS NOT NULL FROM card")).all()
    return {identifier: (sha, missing) for identifier, sha, missing in found}


def demo_corpus_cli(home: Any, cards: int, printings: int = 150, seed: int = 0, degraded: float | None = 0.0,
                    workers: int | None = 1, source: str | None = "demo", catalogue: bool = True) -> Path:
    """The demo data set through the `stage-e` commands of `home`: generate (`degraded` and `workers` None: the
    command's defaults), catalog import with the symbols (unless `catalogue` is False: a caller that imports it
    itself), and ingest into `source` (None: not ingested, e.g. for a watched inbox). Returns the data directory."""
    data = home.root / "demo"
    options = [*(("--degraded-fraction", str(degraded)) if degraded is not None else ()),
               *(("--workers", str(workers)) if workers is not None else ())]
    home.stage_e("demo", "generate", "--printings", str(printings), "--cards", str(cards), "--out", str(data),
                 "--seed", str(seed), *options, timeout=max(180, cards))
    if catalogue:
        home.stage_e("catalog", "import", str(data / "catalog.json"), "--symbols", str(data / "symbols"))
    if source is not None:
        home.stage_e("ingest", str(data / "scans"), "--source", source)
    return data
