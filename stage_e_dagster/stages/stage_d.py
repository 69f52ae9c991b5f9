"""The Stage D runner: a batch of cards end to end, without Dagster: load, decide, write votes and log, resolve.

Cards are processed in chunks; each chunk is one transaction that locks its cards (id order), reads their inputs,
writes vote groups and scan-log rows and recomputes their consensus, so a crash leaves each card either fully
processed or untouched, and a concurrent overlapping batch queues on the shared cards instead of racing.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, Engine

from stage_e_dagster.db.core.transactions import in_transaction, lock_cards
from stage_e_dagster.db.judgement.consensus_store import ConsensusResult, check_policy, recompute_consensus
from stage_e_dagster.db.judgement.evidence_store import mark_decided
from stage_e_dagster.db.judgement.stage_d_inputs import load_expansions, load_stage_d_inputs
from stage_e_dagster.db.judgement.votes import LogWriteResult, VoteWriteResult, write_log_entries, write_vote_groups
from stage_e_dagster.db.work import work_rule
from stage_e_dagster.domain.calculators import CALCULATORS, Calculator
from stage_e_dagster.domain.catalog import ExpansionRef
from stage_e_dagster.domain.stage_d import StageDPlan, outcome_names, plan_batch
from stage_e_dagster.domain.work import decided_by

CHUNK_SIZE = 1000


@dataclass
class _Totals:
    processed: int = 0
    routed: int = 0
    votes: VoteWriteResult = field(default_factory=VoteWriteResult)
    log: LogWriteResult = field(default_factory=LogWriteResult)
    consensus: ConsensusResult = field(default_factory=ConsensusResult)
    outcomes: dict[str, Counter[str]] = field(default_factory=dict)
    ineligible: Counter[str] = field(default_factory=Counter)

    def add_plan(self, plan: StageDPlan) -> None:
        self.routed += len(plan.routed)
        self.ineligible.update(plan.ineligible)
        for calc, counts in plan.outcomes.items():
            self.outcomes[calc].update(counts)


def _chunks(ids: list[int], size: int) -> Iterable[list[int]]:
    for start in range(0, len(ids), size):
        yield ids[start:start + size]


def _process_chunk(
    conn: Connection, chunk: list[int], run_id: str | None, policy: str,
    expansions: dict[str, ExpansionRef], registry: Sequence[Calculator],
) -> tuple[int, StageDPlan, VoteWriteResult, LogWriteResult, ConsensusResult]:
    existing = lock_cards(conn, chunk)
    inputs = load_stage_d_inputs(conn, existing, expansions=expansions)
    cards = [inputs.cards[card_id] for card_id in sorted(inputs.cards)]
    plan = plan_batch(cards, inputs.evidence, inputs.candidates, inputs.expansions, registry)
    votes = write_vote_groups(conn, plan.groups, run_id)
    log = write_log_entries(conn, plan.log_entries, run_id)
    decided = [card_id for card_id, evidence in inputs.evidence.items() if evidence is not None]
    min_dpi, english_match = work_rule.eligibility(conn)
    mark_decided(conn, decided, decided_by(registry, min_dpi=min_dpi, english_match=english_match))
    consensus, _ = recompute_consensus(conn, inputs.cards, policy)
    return len(cards), plan, votes, log, consensus


def run_stage_d(
    engine: Engine,
    card_ids: Iterable[int],
    run_id: str | None,
    policy: str = "funnel",
    *,
    chunk_size: int = CHUNK_SIZE,
    registry: Sequence[Calculator] = CALCULATORS,
) -> dict[str, Any]:
    """Run the calculators for `card_ids`, store their votes and abstentions, recompute consensus; counters.

    Counters (JSON-ready): cards, cards_processed, cards_missing; votes_cast, votes_removed, already_voted,
    vote_groups_{inserted,replaced,withdrawn,retired}, race_absorbed; outcomes and skips per calculator;
    routed_to_review, ineligible (cards no machine may vote on, by reason), review_markers_new, abstentions_logged,
    abstentions_unchanged; cards_{resolved,no_match,unresolved} (states after this run), consensus_changed,
    newly_resolved; policy, elapsed_s, cards_per_s.
    """
    check_policy(policy)
    started = time.perf_counter()
    ids = sorted({int(card_id) for card_id in card_ids})
    totals = _Totals(outcomes={name: Counter() for name in outcome_names(registry)})
    if ids:
        with engine.connect() as conn:
            expansions = load_expansions(conn)
        for chunk in _chunks(ids, chunk_size):
            processed, plan, votes, log, consensus = in_transaction(
                engine,
                lambda conn, chunk=chunk: _process_chunk(conn, chunk, run_id, policy, expansions, registry),
            )
            totals.processed += processed
            totals.add_plan(plan)
            totals.votes.merge(votes)
            totals.log.merge(log)
            totals.consensus.merge(consensus)
    elapsed = time.perf_counter() - started
    return counters(totals, len(ids), policy, elapsed)


def counters(totals: _Totals, requested: int, policy: str, elapsed: float) -> dict[str, Any]:
    """The counters dict `run_stage_d` returns."""
    votes, log, consensus = totals.votes, totals.log, totals.consensus
    return {
        "cards": requested,
        "cards_processed": totals.processed,
        "cards_missing": requested - totals.processed,
        "votes_cast": votes.votes_cast,
        "votes_removed": votes.votes_removed,
        "already_voted": votes.already_voted,
        "vote_groups_inserted": votes.inserted,
        "vote_groups_replaced": votes.replaced,
        "vote_groups_withdrawn": votes.withdrawn,
        "vote_groups_retired": votes.retired,
        "race_absorbed": votes.race_absorbed,
        "outcomes": {calc: dict(sorted(counts.items())) for calc, counts in totals.outcomes.items()},
        "skips": StageDPlan(outcomes=totals.outcomes).skips(),
        "routed_to_review": totals.routed,
        "ineligible": dict(sorted(totals.ineligible.items())),
        "review_markers_new": log.review_marked,
        "abstentions_logged": log.appended,
        "abstentions_unchanged": log.unchanged,
        "cards_resolved": consensus.resolved,
        "cards_no_match": consensus.no_match,
        "cards_unresolved": consensus.unresolved,
        "consensus_changed": consensus.changed,
        "newly_resolved": consensus.newly_resolved,
        "policy": policy,
        "elapsed_s": round(elapsed, 4),
        "cards_per_s": round(totals.processed / elapsed, 1) if elapsed > 0 else 0.0,
    }

