"""The work queue (`card_work`) is the fast path; `card_work_stage` (`db/work/rule.sql`) is the full rule. Whatever
the pipeline writes, in any order, the two agree, both agree with the rule as `domain/work.py` states it (a plain
Python model here), and so do the rule's other readers: Stage C's planning in Python and the SQL fragments. The
rule's eligibility (`card_ineligibility`) agrees with `domain/kinds.py`'s `machine_ineligibility` likewise.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from sqlalchemy import text

from stage_e_dagster.db.core.engine import get_engine
from stage_e_dagster.db.judgement import evidence_store
from stage_e_dagster.db.judgement.evidence_store import mark_decided
from stage_e_dagster.db.reporting import status
from stage_e_dagster.db.work import work_rule
from stage_e_dagster.db.work.predicates import CURRENT_EVIDENCE, ELIGIBILITY_FROM, INELIGIBILITY, WORK_STAGE
from stage_e_dagster.db.work.queue import backlog, cards_needing_work
from stage_e_dagster.domain.evidence.extract import EXTRACTOR_VERSIONS
from stage_e_dagster.domain.evidence.model import Evidence, EvidenceSkip
from stage_e_dagster.domain.kinds import Upload, machine_ineligibility
from stage_e_dagster.domain.stage_c import extractors_needed
from stage_e_dagster.domain.work import owed_stage
from testkit.seed import seed_cards
from testkit.server import scratch_database

OPS = ("extract", "extract_stale", "skip", "decide", "reopen", "reingest", "revert", "vanish", "return",
       "drop_evidence", "cardback", "token", "card", "custom_art", "german", "vote", "withdraw")
SIZES = ((744, 1039), (300, 420), (500, 690), (1039, 744), (420, 300))
"""Pixel sizes an extraction stores, in turn: at 300 DPI, under 200 DPI, under on one axis only, and on their side."""
KIND_OPS = ("cardback", "token", "card")
MACHINE = "stage-d-join-key-v2"


@dataclass
class Model:
    """One card as the domain rule sees it."""

    sha: str
    missing: bool = False
    evidence: dict[str, tuple[bool, bool]] = field(default_factory=dict)  # sha -> (current, decided)
    skips: set[str] = field(default_factory=set)
    shas: list[str] = field(default_factory=list)
    sizes: dict[str, tuple[int, int]] = field(default_factory=dict)  # sha -> the evidence's pixel size
    kind: str = "card"
    language: str | None = None
    tags: frozenset[str] = frozenset()
    voted: bool = False

    def stage(self) -> str | None:
        current, decided = self.evidence.get(self.sha, (False, False))
        return owed_stage(missing=self.missing, current=current, decided=decided, skipped=self.sha in self.skips,
                          kind=self.kind, machine_voted=self.voted)

    def ineligibility(self) -> str | None:
        current, _ = self.evidence.get(self.sha, (False, False))
        width, height = self.sizes.get(self.sha, (0, 0)) if current else (0, 0)
        return machine_ineligibility(Upload(self.kind, self.language, self.tags), width, height)

    def undecide(self) -> None:
        """A change of kind, language or tags clears every evidence row's mark (the card trigger)."""
        self.evidence = {sha: (current, False) for sha, (current, _) in self.evidence.items()}


def _sha(seed: str) -> str:
    return hashlib.sha256(seed.encode()).hexdigest()


def _apply(url: str, card: int, op: str, model: Model, step: int) -> None:
    engine = get_engine(url)
    if op in ("extract", "extract_stale"):
        versions = dict(EXTRACTOR_VERSIONS) if op == "extract" else {"collector": "collector-v0"}
        width, height = SIZES[step % len(SIZES)]
        with engine.begin() as conn:
            evidence_store.save_evidence(conn, card, model.sha, Evidence(extractor_versions=versions, width=width,
                                                                         height=height), "run")
        # Versions merge into what is stored for these bytes (the written ones win); any write clears the mark.
        # Only the geometry extractor (in the full versions) writes the pixel size.
        model.evidence[model.sha] = (op == "extract", False)
        if op == "extract":
            model.sizes[model.sha] = (width, height)
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
        model.sizes.clear()
    elif op in KIND_OPS or op in ("custom_art", "german"):
        kind = op if op in KIND_OPS else model.kind
        tags = model.tags ^ {"custom-art"} if op == "custom_art" else model.tags
        language = (None if model.language else "de") if op == "german" else model.language
        with engine.begin() as conn:
            conn.execute(text("UPDATE card SET kind = :kind, tags = CAST(:tags AS text[]), language = :language "
                              "WHERE id = :id"),
                         {"kind": kind, "tags": "{" + ",".join(sorted(tags)) + "}", "language": language, "id": card})
        if (kind, language, tags) != (model.kind, model.language, model.tags):
            model.undecide()
        model.kind, model.language, model.tags = kind, language, frozenset(tags)
    elif op in ("vote", "withdraw"):
        # As Stage D writes machine votes: the votes and the decided mark in one transaction.
        with engine.begin() as conn:
            if op == "vote":
                conn.execute(text("INSERT INTO card_printing_tag (card_id, printing_id, is_no_match, anonymous_id, "
                                  "source, confidence) VALUES (:id, NULL, true, :voter, 'ocr', 0.6) "
                                  "ON CONFLICT DO NOTHING"), {"id": card, "voter": MACHINE})
            else:
                conn.execute(text("DELETE FROM card_printing_tag WHERE card_id = :id"), {"id": card})
            mark_decided(conn, [card])
        model.voted = op == "vote"
        current, _ = model.evidence.get(model.sha, (False, False))
        if current:
            model.evidence[model.sha] = (True, True)


def _queue_and_rule(url: str, cards: list[int]) -> tuple[dict[int, str | None], dict[int, str | None]]:
    with get_engine(url).connect() as conn:
        queued = dict(conn.execute(text("SELECT card_id, stage FROM card_work WHERE card_id = ANY(:ids)"),
                                   {"ids": cards}).all())
        rule = dict(conn.execute(text(f"SELECT c.id, {WORK_STAGE} FROM card c WHERE c.id = ANY(:ids)"),
                                 {"ids": cards}).all())
    return {c: queued.get(c) for c in cards}, {c: rule.get(c) for c in cards}


def _ineligibility(url: str, cards: list[int]) -> dict[int, str | None]:
    """`card_ineligibility` per card, checked equal to its set-based readers on the way: the `INELIGIBILITY`
    fragment, and `stage-e status`'s count by reason over every card of the database."""
    with get_engine(url).connect() as conn:
        found = dict(conn.execute(text("SELECT id, card_ineligibility(id) FROM card WHERE id = ANY(:ids)"),
                                  {"ids": cards}).all())
        joined = dict(conn.execute(text(f"SELECT c.id, {INELIGIBILITY} FROM {ELIGIBILITY_FROM} "
                                        "WHERE c.id = ANY(:ids)"), {"ids": cards}).all())
        by_reason = dict(conn.execute(text(
            "SELECT reason, count(*) FROM (SELECT card_ineligibility(id) AS reason FROM card "
            "WHERE missing_since IS NULL) AS judged WHERE reason IS NOT NULL GROUP BY reason")).all())
        counted = dict(conn.execute(text(status._INELIGIBLE)).all())
    assert joined == found, "the INELIGIBILITY fragment and card_ineligibility disagree"
    assert counted == by_reason, "stage-e status's count by reason and card_ineligibility disagree"
    return {c: found.get(c) for c in cards}


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


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
# Sequences too long for the search to find reliably: a card voted on, then filed as a card back, is owed Stage D
# once (to withdraw the votes); a decided card whose tags or language change is owed Stage D again; a card back
# extracted is owed nothing; a scan extracted under the DPI floor is ineligible.
@example(ops=[(0, "extract"), (0, "vote"), (0, "cardback"), (0, "withdraw")])
@example(ops=[(0, "extract"), (0, "decide"), (0, "custom_art"), (0, "decide"), (0, "german"), (0, "token")])
@example(ops=[(0, "cardback"), (0, "extract"), (0, "card")])
@example(ops=[(1, "extract_stale"), (1, "extract"), (1, "reingest"), (1, "extract")])
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
        assert _ineligibility(url, cards) == {c: models[c].ineligibility() for c in cards}, (
            f"card_ineligibility, after {ops[: step + 1]}")


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


def test_an_eligibility_setting_change_reopens_stage_d_and_applies_in_the_rule(db_url, db_engine):
    cards = seed_cards(db_url, 2)
    for card, size in zip(cards, ((500, 700), (750, 1040)), strict=True):
        with db_engine.begin() as conn:
            sha = conn.execute(text("SELECT content_sha256 FROM card WHERE id = :id"), {"id": card}).scalar_one()
            evidence_store.save_evidence(conn, card, sha, Evidence(extractor_versions=dict(EXTRACTOR_VERSIONS),
                                                                   width=size[0], height=size[1]), "r")
        with db_engine.begin() as conn:
            conn.execute(text("UPDATE card SET language = 'ja' WHERE id = :id"), {"id": cards[1]})
    with db_engine.begin() as conn:
        mark_decided(conn, cards)
    assert _needing_work(db_engine) == set()
    assert _ineligibility(db_url, cards) == {cards[0]: None, cards[1]: "non-english"}

    stricter = work_rule.code_rule(min_dpi=300, english_match=True)
    work_rule.sync(db_engine, stricter)
    assert _rule_is_current(db_engine, stricter) and not _rule_is_current(db_engine)
    assert _needing_work(db_engine) == set(cards)  # Stage D judges every decided card again under the new settings
    # 500 x 700 px is 201 DPI: under a 300 floor; 750 x 1040 px is 300 DPI, and Japanese may now match English.
    assert _ineligibility(db_url, cards) == {cards[0]: "low-dpi", cards[1]: None}
