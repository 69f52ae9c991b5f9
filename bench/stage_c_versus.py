"""Stage C's CPU per card, this tree's reader against another revision's, measured at the same moment.

The host is shared, and the load moves CPU time by tens of percent: a figure measured today cannot be compared with
one measured yesterday. So this script checks the other revision out into a temporary git worktree and runs the
same measurement in two processes side by side, one importing this tree, one the other (put first on `PYTHONPATH`),
each on its own revision's scans of a set (default: "demo"), each with the catalogue and the card's name as a worker
reads them, one OCR thread, three rounds. The load weighs on both alike; the ratio of their CPU times is the figure.
Prints both processes' rounds and the ratio of the medians; asserts nothing.

Usage: python bench/stage_c_versus.py REVISION [--set demo] [--cards 300] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

MEASURE = """
import os, sys, time
sys.path.insert(0, "bench")
import testkit
testkit.setup()
from stage_c_readers import render
from stage_c_sets import Worlds, plan_set
from stage_e_dagster.domain.evidence.extract import extract_evidence
from stage_e_dagster.domain.evidence.ocr import TesserocrEngine

name, count, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
worlds = Worlds()
world = worlds.of(name)
plans = plan_set(name, worlds, count, seed=1)
data = render(plans)
engine = TesserocrEngine()
extract_evidence(data[0], known_set_codes=world.known, engine=engine)  # the model's first load
for _ in range(rounds):
    started = time.process_time()
    for plan, scan in zip(plans, data):
        extract_evidence(scan, known_set_codes=world.known, engine=engine, catalog=world.read_catalog,
                         name=plan.card["name"])
    print(f"CPU {1000 * (time.process_time() - started) / count:.2f} ms/card, load {os.getloadavg()[0]:.2f}",
          flush=True)
"""


def run_pair(revision: str, name: str, cards: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory(prefix="se-versus-") as scratch:
        other = Path(scratch) / "tree"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(other), revision], check=True,
                       capture_output=True)
        try:
            script = Path(scratch) / "measure.py"
            script.write_text(MEASURE)
            args = [sys.executable, str(script), name, str(cards), str(rounds)]
            env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
            procs = {
                "this tree": subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True),
                revision: subprocess.Popen(args, cwd=other, env={**env, "PYTHONPATH": str(other)},
                                           stdout=subprocess.PIPE, text=True),
            }
            medians = {}
            for label, proc in procs.items():
                out, _ = proc.communicate()
                if proc.returncode != 0:
                    raise SystemExit(f"the measurement of {label} failed (exit {proc.returncode})")
                figures = [float(m) for m in re.findall(r"CPU ([\d.]+) ms/card", out)]
                medians[label] = statistics.median(figures)
                for line in out.splitlines():
                    print(f"  {label}: {line}")
            ratio = medians["this tree"] / medians[revision]
            print(f"{name}, {cards} scans each, side by side: this tree {medians['this tree']:.1f} ms/card, "
                  f"{revision} {medians[revision]:.1f} ms/card (medians): {ratio:.2f}x")
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(other)], check=False,
                           capture_output=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("revision", help="the revision to measure against (a commit, tag or branch)")
    parser.add_argument("--set", default="demo", help="which set of each revision's bench/stage_c_sets.py")
    parser.add_argument("--cards", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    print(f"stage C versus {args.revision}: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at the start")
    run_pair(args.revision, args.set, args.cards, args.rounds)
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
