"""Peak memory of `stage-e catalog import`, `stage-e ingest` and `stage-e status` on a small and a 1M-card database.

Two databases on one temp embedded Postgres are filled by `testkit/scale.py` (`--small` and `--large` cards).
Each command runs as a child process of this script, as an operator runs it; its peak resident set (VmHWM, from
`wait4`'s `ru_maxrss`) and wall time are printed, with the load average.

- `stage-e status` on each database;
- `stage-e catalog import` of the same generated catalogue (`--printings`) into each; 200 of its names are names
  of seeded cards, so the import re-opens every decided card with those names for Stage D (10% of the cards);
- `stage-e ingest` of a directory of `--files-small` and `--files-large` tiny PNG scans (folders of 1,000) into
  the large database, first as new cards and then again (every file read, every one unchanged): the per-file
  slope is what 1M files would add. Postgres' own memory is not counted (it is another process).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from stage_e_dagster.db.core.migrate import upgrade
from testkit.scale import seed
from testkit.server import create_database, throwaway_server

STAGE_E = str(Path(sys.executable).with_name("stage-e"))


def run_peak(argv: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """(peak RSS MB, wall s, last output line) of `argv` run as a child; raises when it fails."""
    started = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        child = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT)
        _pid, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.perf_counter() - started
        out.seek(0)
        text = out.read().decode(errors="replace")
    if child.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {child.returncode}:\n{text[-2000:]}")
    last = next((line for line in reversed(text.splitlines()) if line.strip()), "")
    return usage.ru_maxrss / 1024, seconds, last


def write_catalog(path: Path, printings: int, seeded_names: int) -> None:
    from stage_e_dagster.demo.catalog import generate_catalog

    cards = generate_catalog(printings, seed=7)
    for index, card in enumerate(cards[:seeded_names]):
        card["name"] = f"Card {index + 1}"
        card.pop("card_faces", None)
    path.write_text(json.dumps(cards))


def write_scans(root: Path, files: int) -> None:
    from PIL import Image

    for index in range(files):
        folder = root / f"d{index // 1000:04d}"
        if index % 1000 == 0:
            folder.mkdir(parents=True, exist_ok=True)
        buffer = io.BytesIO()
        Image.new("RGB", (8, 8), (index % 256, (index // 256) % 256, (index // 65536) % 256)).save(buffer, "PNG")
        (folder / f"Card {index} [abc].png").write_bytes(buffer.getvalue())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=10_000)
    parser.add_argument("--large", type=int, default=1_000_000)
    parser.add_argument("--printings", type=int, default=20_000)
    parser.add_argument("--files-small", type=int, default=2_000)
    parser.add_argument("--files-large", type=int, default=50_000)
    args = parser.parse_args()
    rows: list[tuple[str, str, float, float, str]] = []
    loads = [os.getloadavg()[0]]
    with throwaway_server("se-m-") as server:
        root = server.data_dir.parent
        urls = {}
        for size in (args.small, args.large):
            urls[size] = create_database(server.url("postgres"), f"mem_{size}")
            upgrade(urls[size])
            started = time.perf_counter()
            seed(urls[size], size)
            print(f"seeded {size} cards in {time.perf_counter() - started:.0f} s", flush=True)
        catalog = root / "catalog.json"
        write_catalog(catalog, args.printings, 200)
        for label, files in (("small", args.files_small), ("large", args.files_large)):
            write_scans(root / f"scans-{label}", files)

        def env(size: int) -> dict[str, str]:
            return {**os.environ, "STAGE_E_DATABASE_URL": urls[size], "STAGE_E_HOME": str(root / "home"),
                    "STAGE_E_DAGSTER_DATABASE_URL": urls[size]}

        def record(command: str, size_label: str, argv: list[str], size: int) -> None:
            peak, seconds, last = run_peak(argv, env(size))
            rows.append((command, size_label, peak, seconds, last[:90]))
            loads.append(os.getloadavg()[0])
            print(f"{command:34s}{size_label:>22s}{peak:9.0f} MB{seconds:9.1f} s   {last[:90]}", flush=True)

        for size in (args.small, args.large):
            record("stage-e status", f"{size:,d} cards", [STAGE_E, "status"], size)
        for size in (args.small, args.large):
            record("stage-e catalog import", f"{size:,d} cards", [STAGE_E, "catalog", "import", str(catalog)], size)
        for label, files in (("small", args.files_small), ("large", args.files_large)):
            argv = [STAGE_E, "ingest", str(root / f"scans-{label}"), "--source", f"files-{label}"]
            record("stage-e ingest (new)", f"{files:,d} files", argv, args.large)
            record("stage-e ingest (again, unchanged)", f"{files:,d} files", argv, args.large)
        print(f"\n{'command':34s}{'size':>22s}{'peak RSS':>12s}{'wall':>11s}")
        for command, size_label, peak, seconds, _last in rows:
            print(f"{command:34s}{size_label:>22s}{peak:9.0f} MB{seconds:9.1f} s")
        by = {(command, size_label): peak for command, size_label, peak, _s, _l in rows}
        again = "stage-e ingest (again, unchanged)"
        slope = ((by[(again, f"{args.files_large:,d} files")] - by[(again, f"{args.files_small:,d} files")]) * 2**20
                 / (args.files_large - args.files_small))
        print(f"ingest: {slope:.0f} B per extra file (re-ingest); load average {min(loads):.1f}-{max(loads):.1f} "
              f"on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
