"""Throughput of the Stage D join-key decision: cards per second over a synthetic in-memory batch.

Builds ~50k cards, each with 1-6 candidate printings and evidence in the mix a real batch shows (set code and
number, number only, shared numbers needing the symbol tie-break, truncated, unreadable, misread set codes),
then times `decide_join_key` (and, for reference, the full `run_calculators` funnel). Target: >= 2,000 cards/s.

Run: `.venv/bin/python bench/stage_d_decide.py [--cards N] [--seed S]`
"""

from __future__ import annotations

import argparse
import random
import time
from collections import Counter

from stage_e_dagster.domain.calculators import decide_join_key, outcome_label, run_calculators
from testkit.stage_d_batch import build_batch, build_expansions

TARGET_CARDS_PER_SECOND = 2_000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=50_000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    expansions = build_expansions(rng)
    batch = build_batch(args.cards, rng, expansions)

    started = time.perf_counter()
    labels = Counter(outcome_label(decide_join_key(card, ev, cands, expansions)) for card, ev, cands in batch)
    join_key_rate = len(batch) / (time.perf_counter() - started)

    started = time.perf_counter()
    for card, ev, cands in batch:
        run_calculators(card, ev, cands, expansions)
    funnel_rate = len(batch) / (time.perf_counter() - started)

    print(f"cards: {len(batch)}  outcomes: {dict(labels.most_common())}")
    print(f"decide_join_key: {join_key_rate:,.0f} cards/s (target >= {TARGET_CARDS_PER_SECOND:,})")
    print(f"run_calculators: {funnel_rate:,.0f} cards/s")
    if join_key_rate < TARGET_CARDS_PER_SECOND:
        raise SystemExit("below target")


if __name__ == "__main__":
    main()
