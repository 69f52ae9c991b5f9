"""Remote sources: cards/s from an S3-compatible server (moto on loopback) and from local files, in the same run,
and a listing of 10,000 objects.

One embedded Postgres, a fresh database per measurement, the same generated scans in a local directory and in a
moto bucket. Measured, alternating local and remote `--repeat` times (median reported):

- fetch phase alone: what Stage C does before extraction. Local: read and hash every file (what ingest and the
  worker do with local bytes). Remote: `RemoteFetcher.fetch` (the limiter, the store's GET, streaming into the fetch
  cache, hashing, the per-card ledger writes) at the fleet rate `--rate` (default 7/s, the production default) and
  with the limiter set out of the way (`--unlimited-rate`), which shows what moto and one process's
  `--concurrency` fetch threads allow;
- whole Stage C (`run_stage_c`: fetch, then OCR on `--workers` slot-holding workers, evidence writes), local and
  remote at `--rate`: how much the fetch limit costs once OCR is in the way;
- listing: a full sync pass over `--listing` objects in the bucket (no object is downloaded), then a second pass
  that finds nothing changed.

Prints figures and ratios; asserts nothing.
Usage: python bench/remote_sources.py [--cards N] [--rate R] [--unlimited-rate R] [--workers W] [--concurrency C]
       [--listing N] [--repeat R]
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from sqlalchemy import text

import testkit
from stage_e_dagster.db.core.engine import get_engine
from stage_e_dagster.db.core.migrate import upgrade
from stage_e_dagster.domain.stage_c import StageCCounters
from stage_e_dagster.stages.stage_c import run_stage_c
from stage_e_dagster.workers.ocr_pool import PoolSettings
from testkit.corpus import demo_corpus, ingest, load_catalogue
from testkit.remote import add_s3, make_fetcher, owed, s3_server, sync, upload_tree
from testkit.server import throwaway_server
from testkit.stores import S3Server


def _ids(engine) -> list[int]:
    with engine.connect() as conn:
        return list(conn.execute(text("SELECT id FROM card ORDER BY id")).scalars())


def local_fetch(scans: Path) -> float:
    """Seconds to read and hash every scan file."""
    started = time.perf_counter()
    for path in sorted(p for p in scans.rglob("*") if p.is_file()):
        hashlib.sha256(path.read_bytes()).hexdigest()
    return time.perf_counter() - started


def remote_database(url: str, root: Path, server: S3Server) -> object:
    """A fresh database with the catalogue and the bucket's prefix registered and listed; its engine."""
    upgrade(url)
    engine = get_engine(url)
    load_catalogue(engine, root)
    add_s3(engine, "bucket", server, prefix="scans")
    sync(engine, "bucket")
    return engine


def remote_fetch(url: str, root: Path, server: S3Server, rate: float, concurrency: int, name: str
                 ) -> tuple[float, dict]:
    """Seconds for the fetch phase over every card of a fresh database, and the fetch outcome counts."""
    engine = remote_database(url, root, server)
    work = owed(engine, "bucket")
    counters = StageCCounters()
    fetcher = make_fetcher(engine, root / f"cache-{name}", server, run_id="bench", rate=rate,
                           concurrency=concurrency, timeout_seconds=60.0)
    started = time.perf_counter()
    fetcher.fetch(work, counters)
    return time.perf_counter() - started, dict(counters.fetch)


def stage_c(url: str, root: Path, workers: int, server: S3Server | None, rate: float, concurrency: int,
            name: str) -> float:
    """Seconds of a whole Stage C run over every card of a fresh database, local (server None) or remote."""
    if server is None:
        upgrade(url)
        engine = get_engine(url)
        load_catalogue(engine, root)
        ingest(engine, root / "scans", "local")
        fetcher = None
    else:
        engine = remote_database(url, root, server)
        fetcher = make_fetcher(engine, root / f"cache-{name}", server, run_id="bench", rate=rate,
                               concurrency=concurrency)
    settings = PoolSettings(workers=workers, engine="tesserocr", holder=f"bench-{name}",
                            slots={"database_url": url, "max_slots": workers, "scope": "host"})
    counters = run_stage_c(engine, _ids(engine), f"bench-{name}", settings, fetcher=fetcher)
    assert counters.extracted + sum(counters.skipped.values()) == len(_ids(engine)), counters
    return counters.elapsed_seconds


def listing(url: str, server: S3Server, objects: int) -> tuple[float, float, float]:
    """(upload seconds, first pass seconds, unchanged second pass seconds) for `objects` small objects."""
    client = server.client()
    started = time.perf_counter()
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda i: client.put_object(Bucket=server.bucket, Key=f"many/card-{i:06d}.png",
                                                  Body=b"x" * 64), range(objects)))
    uploaded = time.perf_counter() - started
    upgrade(url)
    engine = get_engine(url)
    add_s3(engine, "many", server, prefix="many")
    started = time.perf_counter()
    first = sync(engine, "many")
    first_s = time.perf_counter() - started
    assert first.summary.new == objects, first
    started = time.perf_counter()
    second = sync(engine, "many", full=True)
    second_s = time.perf_counter() - started
    assert second.summary.new == 0 and second.summary.changed == 0, second
    return uploaded, first_s, second_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=40)
    parser.add_argument("--rate", type=float, default=7.0, help="the fleet fetch rate, fetches/s")
    parser.add_argument("--unlimited-rate", type=float, default=10_000.0, help="a rate the limiter never reaches")
    parser.add_argument("--workers", type=int, default=1, help="OCR workers in the whole Stage C runs")
    parser.add_argument("--concurrency", type=int, default=4, help="fetch threads (STAGE_E_FETCH_CONCURRENCY)")
    parser.add_argument("--listing", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    testkit.setup()
    print("host load before:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    names = ["warmup", "listing", *(f"{kind}_{i}" for i in range(args.repeat)
                                    for kind in ("fetch_limited", "fetch_unlimited", "c_local", "c_remote"))]
    figures: dict[str, list[float]] = {}
    with throwaway_server("se-rb-", databases=tuple(names)) as pg, s3_server(configured=True) as server:
        root = pg.data_dir.parent / "data"
        root.mkdir()
        upgrade(pg.url("warmup"))
        demo_corpus(pg.url("warmup"), root, cards=args.cards, printings=150, degraded=0.0, workers=2,
                    source="warmup")
        cards = upload_tree(server, root / "scans", "scans")
        size = sum(p.stat().st_size for p in (root / "scans").rglob("*") if p.is_file())
        warm = get_engine(pg.url("warmup"))  # starts the OCR workers' forkserver before anything is timed
        run_stage_c(warm, _ids(warm)[:2], "bench-warmup", PoolSettings(
            workers=1, engine="tesserocr", holder="bench-warmup",
            slots={"database_url": pg.url("warmup"), "max_slots": 1, "scope": "host"}))
        limited_peaks = []
        for i in range(args.repeat):
            figures.setdefault("fetch local", []).append(local_fetch(root / "scans"))
            before = len(server.record.seen)
            seconds, counts = remote_fetch(pg.url(f"fetch_limited_{i}"), root, server, args.rate, args.concurrency,
                                           f"fetch_limited_{i}")
            assert counts.get("fetched") == cards, counts
            limited_peaks.append(server.record.max_in_window(1.0, since=before))
            figures.setdefault(f"fetch remote at {args.rate:g}/s", []).append(seconds)
            seconds, counts = remote_fetch(pg.url(f"fetch_unlimited_{i}"), root, server, args.unlimited_rate,
                                           args.concurrency, f"fetch_unlimited_{i}")
            assert counts.get("fetched") == cards, counts
            figures.setdefault("fetch remote, limiter out of the way", []).append(seconds)
            order = (None, server) if i % 2 == 0 else (server, None)
            for store in order:
                kind = "c_local" if store is None else "c_remote"
                label = "Stage C local" if store is None else f"Stage C remote at {args.rate:g}/s"
                figures.setdefault(label, []).append(stage_c(pg.url(f"{kind}_{i}"), root, args.workers, store,
                                                             args.rate, args.concurrency, f"{kind}_{i}"))
        uploaded, first_s, second_s = listing(pg.url("listing"), server, args.listing)
    print(f"remote sources bench: {cards} demo scans ({size / cards / 1024:.0f} KiB each on average), moto on "
          f"loopback, {args.concurrency} fetch threads, {args.workers} OCR worker(s), median of {args.repeat}")
    medians = {label: statistics.median(values) for label, values in figures.items()}
    for label, median in medians.items():
        print(f"  {label:40s} {median:8.2f} s  {cards / median:8.1f} cards/s   "
              f"(runs: {', '.join(format(v, '.2f') for v in figures[label])} s)")
    local = medians["Stage C local"]
    remote = medians[f"Stage C remote at {args.rate:g}/s"]
    print(f"  Stage C remote / local: {remote / local:.2f}x the wall time; fetch unlimited / local read: "
          f"{medians['fetch remote, limiter out of the way'] / medians['fetch local']:.0f}x")
    print(f"  most object requests moto saw in any 1 s of a limited fetch: {max(limited_peaks)} "
          f"(limit {args.rate:g})")
    print(f"  listing {args.listing} objects: first pass {first_s:.2f} s ({args.listing / first_s:.0f} objects/s), "
          f"unchanged second pass {second_s:.2f} s ({args.listing / second_s:.0f} objects/s); upload took "
          f"{uploaded:.1f} s")
    print("host load after:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())


if __name__ == "__main__":
    main()
