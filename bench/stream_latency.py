"""Stream latency: how long a scan dropped into a watched source waits for its machine verdict under `stage-e dev`.

Starts `stage-e dev` on the project's defaults (a throwaway STAGE_E_HOME with its own embedded Postgres), registers
an inbox directory as a source, and renames generated unseen scans ("unseen" profile: fonts and layouts the demo
renderer never draws) into it:

- idle: first a baseline `stage-e dev` whose stream sensors tick once a day, then the defaults with nothing arriving;
  CPU of every process of the `stage-e dev` tree (webserver, daemon, code server, runs, OCR workers) and of the
  embedded Postgres, as % of one core over the window;
- trickle: one file every 2 s (40 files);
- burst: 100 files at once, after the stream went idle;
- sustained: 5 files/s for 2 minutes (600 files).

A card is done when it has evidence and either a machine vote or a `to-review` routing; its latency runs from the
rename into the inbox to the later of those database writes. Prints per phase p50/p95/max, cards/s and the
keeps-up figure (mean of the last 10 latencies minus the mean of the first 10); the last line is
`stream latency p95=<s> burst100=<s> sustained_p95=<s> idle_cpu=<%>`. Asserts nothing.

Usage: python bench/stream_latency.py [--printings 2000] [--quick] [--idle-seconds 60] [--keep] [--set VAR=VALUE ...]
(`--set` overrides a setting for a lever's measurement; the headline figures use the defaults.)
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import psutil

from stage_e_dagster.demo.catalog import generate_catalog, write_catalog, write_sets
from stage_e_dagster.demo.hard import HardScan, plan_scans
from stage_e_dagster.demo.symbols import render_set_symbol
from testkit.live import Dev, Home

SEED = 23
BASELINE_ENV = {"STAGE_E_INBOX_INTERVAL_SECONDS": "86400", "STAGE_E_STREAM_INTERVAL_SECONDS": "86400"}
"""The idle baseline: `stage-e dev` whose stream sensors tick once a day (everything else as deployed)."""

_DONE = """
SELECT c.identifier,
       extract(epoch FROM greatest(e.created_at, least(v.first_vote, r.routed)))
FROM card c
JOIN image_evidence e ON e.card_id = c.id AND e.content_sha256 = c.content_sha256
LEFT JOIN (SELECT card_id, min(created_at) AS first_vote FROM card_printing_tag WHERE source = 'ocr'
           GROUP BY card_id) v ON v.card_id = c.id
LEFT JOIN (SELECT card_id, min(created_at) AS routed FROM card_scan_log WHERE skip_reason = 'to-review'
           GROUP BY card_id) r ON r.card_id = c.id
WHERE v.first_vote IS NOT NULL OR r.routed IS NOT NULL
"""


def _render(args: tuple[HardScan, str]) -> tuple[str, bytes]:
    scan, name = args
    return name, scan.jpeg()


def prepare(home: Home, printings: int, cards: int) -> list[Path]:
    """Catalogue, symbols and sets imported; `cards` unseen scans rendered into a staging directory."""
    data = home.root / "data"
    (data / "symbols").mkdir(parents=True)
    catalog = generate_catalog(printings, seed=SEED)
    write_catalog(data / "catalog.json", catalog)
    write_sets(data / "sets.json", catalog)
    for code in sorted({c["set"] for c in catalog}):
        render_set_symbol(code).save(data / "symbols" / f"{code}.png")
    home.stage_e("catalog", "import", str(data / "catalog.json"), "--symbols", str(data / "symbols"),
                 "--sets", str(data / "sets.json"), timeout=600)
    staging = home.root / "staging"
    staging.mkdir()
    planned = plan_scans(catalog, cards, "unseen", seed=SEED)
    jobs = [(scan, f"{str(scan.card['name']).split(' // ')[0]} ({i}).jpg") for i, scan in enumerate(planned)]
    with ProcessPoolExecutor(max_workers=min(4, os.cpu_count() or 1)) as pool:
        for name, data_bytes in pool.map(_render, jobs, chunksize=8):
            (staging / name).write_bytes(data_bytes)
    return sorted(staging.iterdir(), key=lambda p: int(p.stem.rsplit("(", 1)[1].rstrip(")")))


def tree_cpu(dev: Dev, home: Home) -> float:
    """CPU seconds so far of every process of the `stage-e dev` tree and of the embedded Postgres."""
    total = 0.0
    procs: list[psutil.Process] = []
    try:
        root = psutil.Process(dev.proc.pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.Error:
        pass
    pid = home.server.status().pid
    if pid:
        try:
            postmaster = psutil.Process(pid)
            procs += [postmaster, *postmaster.children(recursive=True)]
        except psutil.Error:
            pass
    for proc in procs:
        try:
            times = proc.cpu_times()
            total += times.user + times.system
        except psutil.Error:
            continue
    return total


def idle_cpu(dev: Dev, home: Home, seconds: float) -> float:
    """% of one core the tree used over `seconds` with nothing arriving."""
    before, started = tree_cpu(dev, home), time.monotonic()
    time.sleep(seconds)
    return 100.0 * (tree_cpu(dev, home) - before) / (time.monotonic() - started)


def done_times(home: Home) -> dict[str, float]:
    import psycopg2

    from stage_e_dagster.db.core.urls import libpq_dsn

    conn = psycopg2.connect(libpq_dsn(home.url), connect_timeout=5)
    try:
        with conn.cursor() as cur:
            cur.execute(_DONE)
            return {identifier: float(done) for identifier, done in cur.fetchall()}
    finally:
        conn.close()


def drop(files: list[Path], inbox: Path, every: float) -> dict[str, float]:
    """Rename `files` into `inbox`, one every `every` seconds (0: all at once); arrival time per identifier."""
    arrived: dict[str, float] = {}
    start = time.time()
    for index, path in enumerate(files):
        if every:
            delay = start + index * every - time.time()
            if delay > 0:
                time.sleep(delay)
        path.replace(inbox / path.name)
        arrived[path.name] = time.time()
    return arrived


def await_done(home: Home, dev: Dev, arrived: dict[str, float], timeout: float) -> dict[str, float]:
    """Latency per card once every card of `arrived` is done (or the timeout passes: missing ones are left out)."""
    deadline = time.monotonic() + timeout
    done: dict[str, float] = {}
    while time.monotonic() < deadline:
        done = {name: t for name, t in done_times(home).items() if name in arrived}
        if len(done) == len(arrived):
            break
        dev.record()
        time.sleep(0.5)
    return {name: max(0.0, done[name] - arrived[name]) for name in done}


def summary(label: str, arrived: dict[str, float], latency: dict[str, float]) -> dict[str, float]:
    order = sorted(latency, key=lambda name: arrived[name])
    values = [latency[name] for name in order]
    if not values:
        print(f"{label}: nothing finished")
        return {"p95": float("nan"), "max": float("nan"), "span": float("nan")}
    quantiles = statistics.quantiles(values, n=20, method="inclusive") if len(values) >= 2 else values * 19
    finished = max(arrived[name] + latency[name] for name in order)
    span = finished - min(arrived.values())
    keeps_up = statistics.mean(values[-10:]) - statistics.mean(values[:10])
    figures = {"p50": statistics.median(values), "p95": quantiles[18], "max": max(values), "span": span,
               "cards_per_s": len(values) / span if span else float("nan"), "keeps_up": keeps_up}
    print(f"{label}: {len(values)}/{len(arrived)} done; latency p50 {figures['p50']:.1f} s, "
          f"p95 {figures['p95']:.1f} s, max {figures['max']:.1f} s; first arrival to last verdict {span:.1f} s "
          f"({figures['cards_per_s']:.1f} cards/s); keeps up: last 10 minus first 10 = {keeps_up:+.1f} s", flush=True)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--printings", type=int, default=2000)
    parser.add_argument("--idle-seconds", type=float, default=60.0)
    parser.add_argument("--quick", action="store_true", help="10-file trickle, 30-file burst, 30 s sustained")
    parser.add_argument("--keep", action="store_true", help="keep the throwaway home (its path is printed)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="VAR=VALUE",
                        help="a STAGE_E_* setting for this measurement (a lever), instead of its default")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a stopped bench still takes its stage-e dev down
    trickle_n, burst_n, sustained_s = (10, 30, 30) if args.quick else (40, 100, 120)
    total = trickle_n + burst_n + 5 * sustained_s

    print(f"host: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at the start", flush=True)
    home = Home()
    home.env.pop("STAGE_E_STREAMING", None)
    home.env.pop("STAGE_E_INBOX_INTERVAL_SECONDS", None)
    home.env.update(dict(item.split("=", 1) for item in args.overrides))
    if args.overrides:
        print(f"settings changed from their defaults: {', '.join(args.overrides)}", flush=True)
    dev: Dev | None = None
    try:
        print(f"rendering {total} unseen scans and importing a {args.printings}-printing catalogue ...", flush=True)
        files = prepare(home, args.printings, total)
        inbox = home.root / "inbox"
        inbox.mkdir()
        home.stage_e("sources", "add", str(inbox), "--key", "inbox")

        defaults = dict(home.env)
        home.env.update(BASELINE_ENV)
        dev = Dev(home)
        dev.wait_ready()
        time.sleep(20)  # let start-up settle before the window
        baseline = idle_cpu(dev, home, args.idle_seconds)
        print(f"idle baseline (stream sensors ticking daily): {baseline:.1f}% of one core", flush=True)
        dev.ctrl_c()
        home.env = defaults
        dev = Dev(home)
        dev.wait_ready()
        time.sleep(20)
        idle = idle_cpu(dev, home, args.idle_seconds)
        print(f"idle with the stream on the defaults: {idle:.1f}% of one core; the stream adds "
              f"{idle - baseline:+.1f}% (processes: the stage-e dev tree and the embedded Postgres)", flush=True)

        trickle = files[:trickle_n]
        burst = files[trickle_n:trickle_n + burst_n]
        sustained = files[trickle_n + burst_n:]
        arrived = drop(trickle, inbox, 2.0)
        t = summary("trickle (1 file / 2 s)", arrived, await_done(home, dev, arrived, 300))
        time.sleep(5)
        arrived = drop(burst, inbox, 0)
        b = summary(f"burst ({burst_n} files)", arrived, await_done(home, dev, arrived, 300))
        time.sleep(5)
        arrived = drop(sustained, inbox, 0.2)
        s = summary("sustained (5 files/s)", arrived, await_done(home, dev, arrived, 600))
        load = os.getloadavg()[0]
        print(f"load average {load:.2f} at the end", flush=True)
        print(f"stream latency p95={t['p95']:.1f} burst{burst_n}={b['span']:.1f} sustained_p95={s['p95']:.1f} "
              f"idle_cpu={idle - baseline:.1f}")
    finally:
        if dev is not None:
            dev.kill_all()
        if home.server.status().running:
            home.server.stop()
        if args.keep:
            print(f"kept {home.root}")
        else:
            shutil.rmtree(home.root, ignore_errors=True)


if __name__ == "__main__":
    main()
