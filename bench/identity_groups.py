"""Identity groups in Stage C: the saving when 20% of a collection are byte-identical copies of other scans.

Two collections of N generated scans with the same pixels: in `copies`, a fifth of the files are byte-identical
copies of others (what proxy collections look like); in `baseline`, those same copies carry one extra PNG text chunk,
so their bytes (content hash) differ and each must be read. Each collection goes into its own database of one
embedded Postgres and through the real Stage C runner (`run_stage_c`: worker pool, OCR slots, evidence writes);
the figures are the files read, the copies carried and the wall time of each, and the saving. The two runs
alternate `--repeat` times on fresh databases and the median wall time is reported, because a shared machine's
load moves single runs by tens of percent. Prints; asserts nothing.
Usage: python bench/identity_groups.py [--cards N] [--duplicates F] [--workers W] [--repeat R]
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
from pathlib import Path

from PIL import Image
from PIL.PngImagePlugin import PngInfo

import testkit
from stage_e_dagster.db.core.engine import get_engine
from stage_e_dagster.db.core.migrate import upgrade
from stage_e_dagster.demo.render import render_scan
from stage_e_dagster.stages.stage_c import run_stage_c
from stage_e_dagster.workers.ocr_pool import PoolSettings
from testkit.corpus import ingest, load_catalogue, write_catalogue
from testkit.server import throwaway_server

COLLECTIONS = ("warmup", "baseline", "copies")


def build(root: Path, cards: int, duplicates: float, seed: int) -> dict[str, int]:
    """The catalogue and the collections' scan directories; returns how many unique images and copies."""
    rng = random.Random(seed)
    catalogue = write_catalogue(root, max(200, cards), seed)
    copies = round(cards * duplicates)
    unique = cards - copies
    for name in COLLECTIONS:
        (root / name).mkdir()
    for index, card in enumerate(rng.sample(catalogue, unique)):  # distinct printings: distinct images
        path = root / "copies" / f"scan {index}.png"
        render_scan(card, long_side=1680, bleed=bool(index % 2), seed=index).save(path)
        shutil.copy(path, root / "baseline" / path.name)
    for index in range(copies):
        original = root / "copies" / f"scan {rng.randrange(unique)}.png"
        shutil.copy(original, root / "copies" / f"copy {index}.png")
        with Image.open(original) as img:  # the same pixels, other bytes: read again
            info = PngInfo()
            info.add_text("copy", str(index))
            img.save(root / "baseline" / f"copy {index}.png", pnginfo=info)
    for index in range(2):
        shutil.copy(root / "copies" / f"scan {index}.png", root / "warmup" / f"scan {index}.png")
    return {"unique": unique, "copies": copies}


def measure(url: str, root: Path, name: str, workers: int) -> dict[str, float]:
    """One Stage C run over collection `name` in the fresh database at `url`."""
    upgrade(url)
    engine = get_engine(url)
    load_catalogue(engine, root)
    ingest(engine, root / name, name)
    with engine.connect() as conn:
        ids = list(conn.exec_driver_sql("SELECT id FROM card ORDER BY id").scalars())
    settings = PoolSettings(workers=workers, engine="tesserocr", holder=f"bench-{name}",
                            slots={"database_url": url, "max_slots": workers, "scope": "host"})
    counters = run_stage_c(engine, ids, f"bench-{name}", settings)
    get_engine.cache_clear()
    return {"cards": len(ids), "read": counters.extracted + sum(counters.skipped.values()),
            "carried": counters.copies_carried, "seconds": counters.elapsed_seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=60)
    parser.add_argument("--duplicates", type=float, default=0.2, help="fraction of the cards that are copies")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3, help="alternating runs of each collection")
    args = parser.parse_args()
    testkit.setup()
    runs: dict[str, list[dict[str, float]]] = {"baseline": [], "copies": []}
    order = [name for r in range(args.repeat) for name in (("baseline", "copies"), ("copies", "baseline"))[r % 2]]
    databases = ("warmup", *(f"{name}_{i}" for i, name in enumerate(order)))
    with throwaway_server("se-ig-", databases=databases) as server:
        root = server.data_dir.parent
        sizes = build(root, args.cards, args.duplicates, args.seed)
        measure(server.url("warmup"), root, "warmup", args.workers)  # starts the worker forkserver
        for i, name in enumerate(order):
            runs[name].append(measure(server.url(f"{name}_{i}"), root, name, args.workers))
    print(f"identity groups bench: {args.cards} scans at 1200x1680 PNG, {sizes['copies']} of them "
          f"({args.duplicates:.0%}) byte-identical copies of {sizes['unique']} images; {args.workers} OCR worker(s), "
          f"median of {args.repeat} alternating runs")
    median: dict[str, float] = {}
    for name, results in runs.items():
        first = results[0]
        median[name] = statistics.median(r["seconds"] for r in results)
        print(f"{name:9s} {first['cards']:4.0f} cards  {first['read']:4.0f} read from file  {first['carried']:4.0f} "
              f"carried  {median[name]:7.2f} s  {first['cards'] / median[name]:6.2f} cards/s   "
              f"(runs: {', '.join(format(r['seconds'], '.2f') for r in results)} s)")
    base, copies = runs["baseline"][0], runs["copies"][0]
    print(f"saving: {1 - copies['read'] / base['read']:.0%} fewer files read, "
          f"{1 - median['copies'] / median['baseline']:.0%} less Stage C wall time "
          f"({median['baseline']:.2f} s -> {median['copies']:.2f} s)")


if __name__ == "__main__":
    main()
