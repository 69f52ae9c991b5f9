"""The calculator registry: adding a calculator is one module (`testkit/calculators.py`) plus one registry line,
and the runner, the outcome labels, the `decided_by` mark and the review queue all follow from it."""

from __future__ import annotations

import pytest

from stage_e_dagster.db.review.queue import review_queue
from stage_e_dagster.db.work.queue import backlog
from stage_e_dagster.domain.calculators import CALCULATORS, ERA_ID, FALLBACK_ID, JOIN_KEY_ID, SLOW_PATH_ID, Calculator
from stage_e_dagster.domain.calculators.registry import UNTIL_HIT, split_voter_id
from stage_e_dagster.domain.work import DECIDED_BY, decided_by
from stage_e_dagster.stages.stage_d import run_stage_d
from testkit.calculators import YEAR_ID, decide_year
from testkit.seed import add_cards, add_evidence, mini_catalog
from testkit.sql import rows

WITH_YEAR = (*CALCULATORS, Calculator(YEAR_ID, decide_year, hit_confidence=0.9))  # the one registry line


def test_the_registry_declares_the_funnel_in_order() -> None:
    assert [c.id for c in CALCULATORS] == [JOIN_KEY_ID, ERA_ID, FALLBACK_ID]
    assert CALCULATORS[1].runs == CALCULATORS[2].runs == UNTIL_HIT
    assert [(c.family, c.version, c.label) for c in CALCULATORS] == [
        ("stage-d-join-key", 2, "join-key"), ("stage-d-era", 1, "era"), ("stage-d-fallback", 2, "fallback")]
    assert DECIDED_BY == f"{JOIN_KEY_ID}+{ERA_ID}+{FALLBACK_ID}+{SLOW_PATH_ID};min-dpi=200;english-match=off"
    assert split_voter_id("stage-d-join-key-v12") == ("stage-d-join-key", 12)
    with pytest.raises(ValueError, match="<family>-v<N>"):
        Calculator("stage-d-unversioned", decide_year)
    with pytest.raises(ValueError, match="stage-d-"):
        Calculator("year-v1", decide_year)


def test_a_new_calculator_is_one_module_and_one_registry_line(db_url, db_engine) -> None:
    printings = mini_catalog(db_url)
    # The legal line says 2001 and nothing else was read: join-key and fallback abstain; only 'bbb' came out in 2001.
    (card,) = add_cards(db_url, [("opt.png", "Opt", None)])
    add_evidence(db_url, card, copyright_year=2001)

    before = run_stage_d(db_engine, [card], "run-1")
    assert before["routed_to_review"] == 1
    with db_engine.connect() as conn:
        assert [item.card_id for item in review_queue(conn)] == [card]

    after = run_stage_d(db_engine, [card], "run-2", registry=WITH_YEAR)
    assert after["outcomes"][YEAR_ID] == {"vote": 1}
    assert after["routed_to_review"] == 0
    votes = rows(db_url, "SELECT anonymous_id, printing_id, confidence FROM card_printing_tag")
    assert votes == [(YEAR_ID, printings["bbb-40"], 0.9)]
    # Its hit rule reaches the review queue's SQL; the mark Stage D leaves names it.
    with db_engine.connect() as conn:
        assert review_queue(conn, registry=WITH_YEAR) == []
        assert [item.card_id for item in review_queue(conn)] == [card]
    assert rows(db_url, "SELECT decided_by FROM image_evidence") == [(decided_by(WITH_YEAR),)]
    assert YEAR_ID in decided_by(WITH_YEAR)
    # Deployed without it (the default registry), the card is owed a Stage D pass again.
    with db_engine.connect() as conn:
        assert backlog(conn)["stage_d"] == 1
