"""The race: 8 OS processes write votes for overlapping batches at once, round after round.

Each child is forked from the test process once the parent's pooled connections are closed, so it opens connections
of its own: the race is between OS processes on separate sessions, which is what a fork gives as well as a spawned
interpreter, without each of the eight importing the package again. Checked: no exception anywhere, exactly one vote per
(card, voter, outcome) and one conclusion per machine voter, the counters add up across processes, and the final
state is the one a single sequential pass produces.
"""

from __future__ import annotations

import multiprocessing as mp
import traceback
from collections import Counter
from typing import Any

import pytest
from sqlalchemy import func, select

from stage_e_dagster.db.core.engine import get_engine, session_scope
from stage_e_dagster.db.core.models import CardPrintingTag, CardPrintingTagArchive, CardScanLog
from stage_e_dagster.db.judgement.stage_d_inputs import load_stage_d_inputs
from stage_e_dagster.db.judgement.votes import write_vote_groups
from stage_e_dagster.domain.calculators import ERA_ID, FALLBACK_ID, JOIN_KEY_ID
from stage_e_dagster.domain.stage_d import ProposedVote, VoteGroup, plan_batch
from stage_e_dagster.stages.stage_d import run_stage_d
from testkit.corpus import demo_catalogue
from testkit.seed import add_cards, mini_catalog, seed_ground_truth

pytestmark = pytest.mark.slow
PROCESSES = 8
ROUNDS = 5


def _stage_d_worker(url: str, batches: list[list[int]], barrier: Any, results: Any, index: int) -> None:
    """One racing process: a Stage D run per round, all processes starting each round together."""
    try:
        counters = []
        for round_no, batch in enumerate(batches):
            barrier.wait(timeout=120)
            counters.append(run_stage_d(get_engine(url), batch, f"race-{index}-{round_no}", chunk_size=25))
        results.put((index, counters, None))
    except BaseException:  # noqa: BLE001 - report every failure to the parent
        results.put((index, None, traceback.format_exc()))


def _conflict_worker(url: str, cards: list[int], printings: list[int], barrier: Any, results: Any,
                     index: int) -> None:
    """One racing process proposing its own (different) printing for the same (card, voter) groups."""
    try:
        engine = get_engine(url)
        out = []
        for round_no in range(ROUNDS):
            choice = printings[(index + round_no) % len(printings)]
            groups = [VoteGroup(c, "stage-d-join-key-v1", (ProposedVote(choice, False, "ocr", 0.85),))
                      for c in cards]
            barrier.wait(timeout=120)
            with engine.begin() as conn:
                result = write_vote_groups(conn, groups, f"conflict-{index}-{round_no}")
            out.append(vars(result))
        results.put((index, out, None))
    except BaseException:  # noqa: BLE001
        results.put((index, None, traceback.format_exc()))


def _race(target, args_for) -> list[Any]:
    get_engine(args_for(0)[0]).dispose()  # no pooled connection of the parent's is inherited and shared
    ctx = mp.get_context("fork")
    barrier, results = ctx.Barrier(PROCESSES), ctx.Queue()
    procs = [ctx.Process(target=target, args=(*args_for(i), barrier, results, i)) for i in range(PROCESSES)]
    for proc in procs:
        proc.start()
    reports = [results.get(timeout=300) for _ in procs]
    for proc in procs:
        proc.join(timeout=60)
    errors = [err for _, _, err in reports if err]
    assert not errors, errors[0]
    assert all(proc.exitcode == 0 for proc in procs)
    return [payload for _, payload, _ in sorted(reports, key=lambda r: r[0])]


def test_eight_processes_racing_stage_d_on_overlapping_batches(db_url, db_engine, tmp_path):
    catalog = demo_catalogue(db_url, tmp_path, printings=600, seed=3)
    ids = [c.card_id for c in seed_ground_truth(db_url, catalog, count=160, seed=9)]

    def batches(index: int) -> tuple[str, list[list[int]]]:
        rounds = []
        for round_no in range(ROUNDS):  # 100 of 160 cards from a shifting start: every card in several batches
            start = (index * 20 + round_no * 13) % len(ids)
            rounds.append([ids[(start + k) % len(ids)] for k in range(100)])
        return db_url, rounds

    reports = [c for counters in _race(_stage_d_worker, batches) for c in counters]

    with db_engine.connect() as conn:
        inputs = load_stage_d_inputs(conn, ids)
    plan = plan_batch([inputs.cards[i] for i in ids], inputs.evidence, inputs.candidates, inputs.expansions)
    expected = sorted((g.card_id, g.anonymous_id, v.printing_id, v.is_no_match) for g in plan.groups for v in g.votes)
    with session_scope(db_engine) as s:
        stored = sorted((t.card_id, t.anonymous_id, t.printing_id, t.is_no_match)
                        for t in s.scalars(select(CardPrintingTag)))
        log = Counter((r.card_id, r.anonymous_id, r.skip_reason) for r in s.scalars(select(CardScanLog)))
    assert stored == expected  # one row per (card, voter, outcome), exactly the sequential conclusion
    assert len({(c, v) for c, v, _, _ in stored}) == len(stored)  # one conclusion per machine voter
    expected_log = Counter((e.card_id, e.anonymous_id, e.skip_reason) for e in plan.log_entries)
    assert log == expected_log  # each abstention and review marker recorded once despite the race

    def total(key: str) -> int:
        return sum(c[key] for c in reports)

    proposed = sum(c["outcomes"][JOIN_KEY_ID].get("vote", 0) + c["outcomes"][JOIN_KEY_ID].get("no-match", 0)
                   + c["outcomes"][ERA_ID].get("vote", 0) + c["outcomes"][FALLBACK_ID].get("vote", 0) for c in reports)
    assert total("vote_groups_inserted") == len(stored)  # every group inserted exactly once
    assert total("vote_groups_replaced") == total("vote_groups_withdrawn") == total("votes_removed") == 0
    assert total("vote_groups_inserted") + total("already_voted") == proposed
    assert total("votes_cast") == len(stored)
    assert total("review_markers_new") == sum(1 for k in log if k[2] == "to-review")


def test_eight_processes_proposing_different_votes_for_the_same_groups(db_url, db_engine):
    printings = list(mini_catalog(db_url).values())
    cards = add_cards(db_url, [(f"Opt ({i}).png", "Opt", None) for i in range(40)])
    reports = [r for rounds in _race(_conflict_worker, lambda i: (db_url, cards, printings)) for r in rounds]
    with session_scope(db_engine) as s:
        rows = s.execute(select(CardPrintingTag.card_id, func.count()).group_by(CardPrintingTag.card_id)).all()
    assert sorted(rows) == [(card, 1) for card in cards]  # last writer wins, never two conclusions
    assert sum(r["inserted"] for r in reports) == len(cards)
    assert sum(r["inserted"] + r["replaced"] + r["already_voted"] for r in reports) == len(cards) * PROCESSES * ROUNDS
    assert sum(r["votes_cast"] for r in reports) - sum(r["votes_removed"] for r in reports) == len(cards)
    with session_scope(db_engine) as s:  # every replaced vote was archived exactly once, whichever process replaced it
        reason = CardPrintingTagArchive.reason
        archived = s.execute(select(reason, func.count()).group_by(reason))
        assert dict(archived.all()) == {"replaced": sum(r["votes_removed"] for r in reports)}
