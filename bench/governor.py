"""What the load governor and the envelope do as a host's load rises and falls, through the real governor code.

The 1-minute load average is simulated as the kernel computes it (every 5 s, `L = L*e^(-5/60) + n*(1-e^(-5/60))`,
`n` the runnable tasks): `n` = the host's other work + the pipeline's own base load + one per OCR worker (a worker
is CPU-bound, `OMP_THREAD_LIMIT=1`). The real `domain.governor.Governor` reads that load every second, as Stage C's
pool asks it, and sets the worker count; the envelope's host-load bar is judged every 60 s (its sample interval) and
at the start. The pipeline's own base load (Postgres, the Dagster daemon and code server, the run process) defaults
to what `drills/governor.py` measured (runnable processes of the pipeline's tree while it streamed, 2.4 on average
with its one OCR worker, so 1.4 besides it, on a host loaded by others: an upper bound); pass another with
`--own-load`.

Scenarios, 600 s each: `sized` (the work the defaults are sized for: streaming at the slot cap on an otherwise
quiet host), `neighbour` (another job takes half the cores from 120 s to 360 s), `overload` (CPU hogs at twice the core
count from 60 s on: must trip). Each candidate (target, ceiling) is scored: first trip (s), peak load, worker-seconds
(throughput), governor steps. The defaults are the pair that never trips on `sized` or `neighbour` on any host size
and trips on `overload`; among those, the one with the most worker-seconds. Run:
`.venv/bin/python bench/governor.py [--own-load 1.2] [--cpus 2 4 8]`.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from dataclasses import dataclass

from stage_e_dagster.domain.governor import Governor

DECAY = math.exp(-5 / 60)
SECONDS = 600
ENVELOPE_EVERY = 60
QUIET = 0.3  # other work on an otherwise quiet host


def scenarios(cpus: int) -> dict[str, Callable[[int], float]]:
    return {
        "sized": lambda t: QUIET,
        "neighbour": lambda t: QUIET + (cpus / 2 if 120 <= t < 360 else 0),
        "overload": lambda t: QUIET + (2 * cpus if t >= 60 else 0),
    }


@dataclass
class Outcome:
    trip_at: int | None
    peak: float
    worker_seconds: int
    steps: int


def simulate(cpus: int, target: float, ceiling: float, other: Callable[[int], float], own: float,
             governed: bool = True) -> Outcome:
    slots = max(1, cpus - 1)
    gov = Governor(target=target, max_workers=slots)
    load, peak, worker_seconds = QUIET + own, 0.0, 0
    for t in range(SECONDS):
        if governed:
            gov.observe(load, float(t))
        workers = gov.workers if governed else slots
        if t % 5 == 0:
            load = load * DECAY + (other(t) + own + workers) * (1 - DECAY)
        peak = max(peak, load)
        if t % ENVELOPE_EVERY == 0 and load > ceiling:
            return Outcome(t, peak, worker_seconds, len(gov.steps))
        worker_seconds += workers
    return Outcome(None, peak, worker_seconds, len(gov.steps))


CANDIDATES = {
    "target CPUs-1, ceiling CPUs": (lambda c: c - 1.0, lambda c: float(c)),
    "target CPUs, ceiling CPUs": (lambda c: float(c), lambda c: float(c)),
    "target CPUs, ceiling 1.5 x CPUs": (lambda c: float(c), lambda c: 1.5 * c),
    "target CPUs, ceiling 2 x CPUs": (lambda c: float(c), lambda c: 2.0 * c),
    "target 1.5 x CPUs, ceiling 2 x CPUs": (lambda c: 1.5 * c, lambda c: 2.0 * c),
    "target CPUs, ceiling 3 x CPUs": (lambda c: float(c), lambda c: 3.0 * c),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--own-load", type=float, default=1.4,
                        help="runnable tasks of the pipeline besides its OCR workers (drills/governor.py)")
    parser.add_argument("--cpus", type=int, nargs="+", default=[2, 4, 8])
    args = parser.parse_args()
    print(f"simulated 1-minute load, {SECONDS} s per scenario, pipeline's own load {args.own_load}, "
          f"other work {QUIET} when quiet")
    print("| CPUs | candidate | scenario | first trip (s) | peak load | worker-s | steps | ungoverned trip (s) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    good: dict[str, int] = {}
    for name, (target_of, ceiling_of) in CANDIDATES.items():
        ok, throughput = True, 0
        for cpus in args.cpus:
            target, ceiling = target_of(cpus), ceiling_of(cpus)
            for scenario, other in scenarios(cpus).items():
                out = simulate(cpus, target, ceiling, other, args.own_load)
                bare = simulate(cpus, target, ceiling, other, args.own_load, governed=False)
                print(f"| {cpus} | {name} | {scenario} | {out.trip_at if out.trip_at is not None else '-'} | "
                      f"{out.peak:.2f} | {out.worker_seconds} | {out.steps} | "
                      f"{bare.trip_at if bare.trip_at is not None else '-'} |")
                tripped = out.trip_at is not None
                ok = ok and (tripped if scenario == "overload" else not tripped)
                throughput += out.worker_seconds if scenario != "overload" else 0
        if ok:
            good[name] = throughput
    if not good:
        print("\nno candidate keeps the sized and neighbour work untripped and trips the overload")
        return
    chosen = max(good, key=lambda name: good[name])
    print(f"\ncandidates that never trip the sized or neighbour work and trip the overload: {', '.join(good)}")
    print(f"chosen defaults: {chosen} (most worker-seconds among them: {good[chosen]})")


if __name__ == "__main__":
    main()
