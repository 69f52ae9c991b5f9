"""Stage D throughput on a real Postgres: decisions in memory, the vote writer, and run_stage_d end to end.

Starts its own embedded Postgres, loads a synthetic catalogue and evidence for N cards (the mix of
`bench/stage_d_decide.py`: set code and number, number only, shared numbers, misreads, truncated, missing), then
prints:
- cards/s through the join-key decision (pure, in memory)        target >= 2,000
- votes/s written by `write_vote_groups` (one batch: fresh inserts, then identical re-writes, then replacements)
                                                                   target >= 5,000 for fresh inserts
- cards/s of `run_stage_d` end to end (first pass, then an identical re-run)

Run: `.venv/bin/python bench/stage_d.py [--cards N] [--seed S]`
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import random
import time
from dataclasses import fields

from sqlalchemy import insert

from stage_e_dagster.db.core.engine import get_engine
from stage_e_dagster.db.core.migrate import upgrade
from stage_e_dagster.db.core.models import Card, Expansion, ImageEvidence, Printing, Source
from stage_e_dagster.db.judgement.votes import write_vote_groups
from stage_e_dagster.domain.calculators import decide_join_key, run_calculators
from stage_e_dagster.domain.catalog import ExpansionRef, normalise_name
from stage_e_dagster.domain.evidence.model import Evidence
from stage_e_dagster.domain.stage_d import ProposedVote, VoteGroup
from stage_e_dagster.stages.stage_d import run_stage_d
from testkit.server import throwaway_server
from testkit.stage_d_batch import Case, build_batch, build_expansions

TARGET_DECIDED = 2_000
TARGET_VOTES = 5_000
ROWS_PER_INSERT = 5_000


def _insert(conn, model, rows: list[dict]) -> None:
    for start in range(0, len(rows), ROWS_PER_INSERT):
        conn.execute(insert(model), rows[start:start + ROWS_PER_INSERT])


def load(url: str, batch: list[Case], expansions: dict[str, ExpansionRef]) -> list[int]:
    """The synthetic catalogue, cards and evidence in Postgres; returns the card ids."""
    printings: dict[int, dict] = {}
    cards, evidence = [], []
    for card, found, candidates in batch:
        for p in candidates:
            printings[p.id] = {"id": p.id, "scryfall_id": p.scryfall_id, "name": p.name,
                               "name_normalised": normalise_name(p.name), "set_code": p.set_code,
                               "collector_number": p.collector_number, "border_color": p.border_color}
        sha = hashlib.sha256(str(card.id).encode()).hexdigest()
        cards.append({"id": card.id + 1, "source_id": 1, "identifier": f"{card.name}.png", "name": card.name,
                      "name_normalised": normalise_name(card.name), "expansion_hint": card.expansion_hint,
                      "content_sha256": sha, "size_bytes": 1})
        if found is not None:
            evidence.append({**{f.name: getattr(found, f.name) for f in fields(Evidence)},
                             "card_id": card.id + 1, "content_sha256": sha})
    with get_engine(url).begin() as conn:
        conn.execute(insert(Source).values(id=1, key="bench", location="/bench"))
        _insert(conn, Expansion, [{"code": e.code, "name": e.code, "released_at": e.released_at,
                                   "symbol_phash": e.symbol_phash} for e in expansions.values()])
        _insert(conn, Printing, list(printings.values()))
        _insert(conn, Card, cards)
        _insert(conn, ImageEvidence, evidence)
    return [row["id"] for row in cards]


def bench_decide(batch: list[Case], expansions: dict[str, ExpansionRef]) -> tuple[float, float]:
    started = time.perf_counter()
    for card, found, candidates in batch:
        decide_join_key(card, found, candidates, expansions)
    join_key = len(batch) / (time.perf_counter() - started)
    started = time.perf_counter()
    for card, found, candidates in batch:
        run_calculators(card, found, candidates, expansions)
    return join_key, len(batch) / (time.perf_counter() - started)


def bench_writer(url: str, card_ids: list[int], printing_of: dict[int, list[int]]) -> dict[str, float]:
    """Votes/s of one batch write by a separate voter: fresh inserts, identical re-writes, replacements."""
    rates = {}
    for label, pick in (("insert", 0), ("identical", 0), ("replace", -1)):
        groups = [VoteGroup(card_id, "stage-d-bench-v1", (ProposedVote(printing_of[card_id][pick], False, "ocr", 0.8),))
                  for card_id in card_ids]
        started = time.perf_counter()
        with get_engine(url).begin() as conn:
            result = write_vote_groups(conn, groups, f"bench-{label}")
        elapsed = time.perf_counter() - started
        rates[label] = len(groups) / elapsed
        print(f"  write_vote_groups {label:9s}: {len(groups):,} groups in {elapsed:.2f} s = {rates[label]:,.0f} "
              f"votes/s (cast {result.votes_cast:,}, already {result.already_voted:,}, replaced {result.replaced:,})")
    return rates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    expansions = build_expansions(rng)
    batch = build_batch(args.cards, rng, expansions)
    gc.freeze()  # the synthetic batch is the bench's own long-lived data: keep the collector from rescanning it

    join_key_rate, funnel_rate = bench_decide(batch, expansions)
    print(f"cards: {len(batch):,}")
    print(f"decide_join_key (pure): {join_key_rate:,.0f} cards/s (target >= {TARGET_DECIDED:,}); "
          f"run_calculators: {funnel_rate:,.0f} cards/s")

    with throwaway_server("se-b-", databases=("bench",)) as server:
        url = server.url("bench")
        upgrade(url)
        started = time.perf_counter()
        card_ids = load(url, batch, expansions)
        print(f"loaded {len(card_ids):,} cards with evidence in {time.perf_counter() - started:.1f} s")

        first = run_stage_d(get_engine(url), card_ids, "bench-1")
        print(f"run_stage_d first pass: {first['cards_per_s']:,.0f} cards/s ({first['elapsed_s']:.2f} s; "
              f"{first['votes_cast']:,} votes cast, {first['routed_to_review']:,} routed, "
              f"{first['abstentions_logged']:,} abstentions logged)")
        again = run_stage_d(get_engine(url), card_ids, "bench-2")
        print(f"run_stage_d re-run:     {again['cards_per_s']:,.0f} cards/s ({again['elapsed_s']:.2f} s; "
              f"{again['already_voted']:,} already voted, {again['votes_cast']} cast)")

        printing_of = {card.id + 1: [p.id for p in candidates] for card, _, candidates in batch}
        rates = bench_writer(url, card_ids, printing_of)
    if join_key_rate < TARGET_DECIDED or rates["insert"] < TARGET_VOTES:
        raise SystemExit("below target")


if __name__ == "__main__":
    main()
