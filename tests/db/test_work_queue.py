"""The work queue (`card_work`) is the fast path; `card_work_stage` (`db/work/rule.sql`) is the full rule. Whatever
the pipeline writes, in any order, the two agree, both agree with the rule as `domain/work.py` states it (a plain
Python model here), and so do the rule's other readers: Stage C's planning in Python and the SQL fragments.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text

from stage_e_dagster.db.core.engine import get_engine
from stage_e_dagster.db.judgement import evidence_store
from stage_e_dagster.db.judgement.evidence_store import mark_decided
from stage_e_dagster.db.work import work_rule
from stage_e_dagster.db.work.predicates import CURRENT_EVIDENCE, WORK_STAGE
from stage_e_dagster.db.work.queue import backlog, cards_needing_work
from stage_e_dagster.domain.evidence.extract import EXTRACTOR_VERSIONS
from stage_e_dagster.domain.evidence.model import Evidence, EvidenceSkip
from stage_e_dagster.domain.stage_c import extractors_needed
from testkit.seed import seed_cards
from testkit.server import scratch_database

OPS = ("extract", "extract_stale", "skip", "decide", "reopen", "reingest", "revert", "vanish", "return",
       "drop_evidence")


@dataclass
class Model:
    """One card as the domain rule sees it."""

    sha: str
    missing: bool = False
    evidence: dict[str, tuple[bool, bool]] = field(default_factory=dict)  # sha -> (current, decided)
    skips: set[str] = field(default_factory=set)
    shas: list[str] = field(default_factory=list)

    def stage(self) -> str | None:
        if self.missing:
            return None
        current, decided = self.evidence.get(self.sha, (False, False))
        if current:
            return None if decided else "D"
        return None if self.sha in self.skips else "C"


def _sha(seed: str) -> str:
    return hashlib.sha256(seed.encode()).hexdigest()


def _apply(url: str, card: int, op: str, model: Model, step: int) -> None:
    engine = get_engine(url)
    if op in ("extract", "extract_stale"):
        versions = dict(EXTRACTOR_VERSIONS) if op == "extract" else {"collector": "collector-v0"}
        with engine.begin() as conn:
            evidence_store.save_evidence(conn, card, model.sha, Evidence(extractor_versions=versions), "run")
        # Versions merge into what is stored for these bytes (the written ones win); any write clears the mark.
        model.evidence[model.sha] = (op == "extract", False)
    elif op == "skip":
        with engine.begin() as conn:
            evidence_store.log_skip(conn, card, model.sha, EvidenceSkip("unreadable-image"), "run")
        model.skips.add(model.sha)
    elif op == "decide":
        with engine.begin() as conn:
            mark_decided(conn, [card])
        current, _ = model.evidence.get(model.sha, (False, False))
        if current:
            model.evidence[model.sha] = (True, True)
    elif op == "reopen":
        with engine.begin() as conn:
            conn.execute(text("UPDATE image_evidence SET decided_by = NULL WHERE card_id = :id"), {"id": card})
        model.evidence = {sha: (current, False) for sha, (current, _) in model.evidence.items()}
    elif op in ("reingest", "revert"):
        new = _sha(f"{card}-{step}") if op == "reingest" or not model.shas else model.shas[0]
        with engine.begin() as conn:
            conn.execute(text("UPDATE card SET content_sha256 = :sha WHERE id = :id"), {"sha": new, "id": card})
        model.shas.append(model.sha)
        model.sha = new
    elif op in ("vanish", "return"):
        with engine.begin() as conn:
            conn.execute(text(f"UPDATE card SET missing_since = {'now()' if op == 'vanish' else 'NULL'} "
                              "WHERE id = :id"), {"id": card})
        model.missing = op == "vanish"
    elif op == "drop_evidence":
        with engine.begin() as conn:
            conn.execute(text("DELETE FROM image_evidence WHERE card_id = :id"), {"id": card})
        model.evidence.clear()


def _queue_and_rule(url: str, cards: list[int]) -> tuple[dict[int, str | None], dict[int, str | None]]:
    with get_engine(url).connect() as conn:
        queued = dict(conn.execute(text("SELECT card_id, stage FROM card_work WHERE card_id = ANY(:ids)"),
                                   {"ids": cards}).all())
        rule = dict(conn.execute(text(f"SELECT c.id, {WORK_STAGE} FROM card c WHERE c.id = ANY(:ids)"),
                                 {"ids": cards}).all())
    return {c: queued.get(c) for c in cards}, {c: rule.get(c) for c in cards}


def _readers(url: str, cards: list[int]) -> tuple[dict[int, bool], dict[int, bool]]:
    """What the rule's other readers say per card: Stage C's Python planning (does it owe Stage C?) and the
    `CURRENT_EVIDENCE` fragment (does it hold current evidence?)."""
    with get_engine(url).connect() as conn:
        planned = {work.card_id: extractors_needed(work, force=False) is not None
                   for work in evidence_store.load_batch(conn, cards)}
        current = set(conn.execute(text(f"SELECT c.id FROM card c JOIN image_evidence e ON {CURRENT_EVIDENCE} "
                                        "WHERE c.id = ANY(:ids)"), {"ids": cards}).scalars())
    return planned, {c: c in current for c in cards}


@pytest.fixture(scope="module")
def module_db(pg_server_url, template_name):
    with scratch_database(pg_server_url, "wq", template=template_name) as url:
        yield url
        get_engine.cache_clear()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(0, 2), st.sampled_from(OPS)), min_size=1, max_size=14))
def test_the_queue_and_the_full_rule_agree_whatever_is_written(module_db, ops):
    url = module_db
    cards = seed_cards(url, 3)
    with get_engine(url).connect() as conn:
        shas = dict(conn.execute(text("SELECT id, content_sha256 FROM card WHERE id = ANY(:ids)"),
                                 {"ids": cards}).all())
    models = {card: Model(shas[card]) for card in cards}
    for step, (index, op) in enumerate(ops):
        card = cards[index]
        _apply(url, card, op, models[card], step)
        queued, rule = _queue_and_rule(url, cards)
        expected = {c: models[c].stage() for c in cards}
        assert queued == rule == expected, f"after {ops[: step + 1]}"
        planned, current = _readers(url, cards)
        assert planned == {c: rule[c] == "C" for c in cards}, f"Stage C's planning, after {ops[: step + 1]}"
        assert current == {c: models[c].evidence.get(models[c].sha, (False, False))[0] for c in cards}, (
            f"the CURRENT_EVIDENCE fragment, after {ops[: step + 1]}")


def _needing_work(engine) -> set[int]:
    with engine.connect() as conn:
        return {c.id for c in cards_needing_work(conn, 10)}


def _rule_is_current(engine, rule: work_rule.Rule = work_rule.CODE_RULE) -> bool:
    with engine.connect() as conn:
        return work_rule.is_current(conn, rule)


def test_a_rule_change_recomputes_every_card_and_resumes_after_an_interruption(db_url, db_engine):
    cards = seed_cards(db_url, 6)
    for card in cards[:4]:
        with db_engine.begin() as conn:
            sha = conn.execute(text("SELECT content_sha256 FROM card WHERE id = :id"), {"id": card}).scalar_one()
            evidence_store.save_evidence(conn, card, sha, Evidence(extractor_versions=dict(EXTRACTOR_VERSIONS)), "r")
    with db_engine.begin() as conn:
        mark_decided(conn, cards[:4])
    assert _needing_work(db_engine) == set(cards[4:])

    bumped = work_rule.Rule({**EXTRACTOR_VERSIONS, "hashes": "hashes-v99"}, work_rule.CODE_RULE.decided_by,
                            work_rule.CODE_RULE.stage_c_id)
    progress: list[tuple[int, int]] = []
    assert work_rule.sync(db_engine, bumped, chunk=2, progress=lambda done, total: progress.append((done, total)))
    with db_engine.connect() as conn:
        assert backlog(conn)["stage_c"] == 6 and len(progress) == 3  # every card's evidence is stale now
    assert _rule_is_current(db_engine, bumped) and not _rule_is_current(db_engine)

    with db_engine.begin() as conn:  # a recompute cut short: the position stays where it got to
        conn.execute(text("UPDATE work_rule SET current_versions = CAST(:v AS jsonb), decided_by = :d, "
                          "recomputed_through = :pos WHERE id = 1"),
                     {"v": json.dumps(EXTRACTOR_VERSIONS), "d": work_rule.CODE_RULE.decided_by,
                      "pos": cards[1]})
    assert not _rule_is_current(db_engine)
    work_rule.sync(db_engine)  # the same rule: it only finishes the recompute from where it stopped
    assert _rule_is_current(db_engine)
    # Cards up to the stored position kept the bumped rule's state; past it, the code's rule applies again.
    assert _needing_work(db_engine) == {cards[0], cards[1], *cards[4:]}
    with db_engine.begin() as conn:
        assert work_rule.reconcile(conn, 0, cards[-1]) == 2  # the sweep's reconcile mends the two left behind
    assert _needing_work(db_engine) == set(cards[4:])
