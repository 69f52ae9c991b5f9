"""The calculators and a card's kind: tokens voted only onto token printings, cards only onto the others, and a
card the work rule names ineligible voted by none and routed (a card back: not routed)."""

from __future__ import annotations

from datetime import date

import pytest

from stage_e_dagster.domain.calculators import (
    ERA_ID,
    FALLBACK_ID,
    JOIN_KEY_ID,
    SLOW_PATH_ID,
    TO_REVIEW,
    run_calculators,
)
from stage_e_dagster.domain.catalog import CardRef, ExpansionRef, PrintingRef
from stage_e_dagster.domain.evidence.model import Evidence

EXPANSIONS = {"m20": ExpansionRef("m20", date(2019, 7, 12)), "tm20": ExpansionRef("tm20", date(2019, 7, 12))}
CARD_PRINTING = PrintingRef(1, "s-goblin", "Goblin", "m20", "12", layout="normal")
TOKEN_PRINTING = PrintingRef(2, "s-goblin-token", "Goblin", "tm20", "12", layout="token")
SET_TOKEN = PrintingRef(3, "s-goblin-set", "Goblin", "tm20", "13", layout="normal", set_type="token")
CANDIDATES = [CARD_PRINTING, TOKEN_PRINTING, SET_TOKEN]


def _evidence(set_code: str, number: str) -> Evidence:
    return Evidence(collector_raw=f"{number} {set_code.upper()}", collector_number=number, set_code=set_code,
                    set_code_raw=set_code.upper())


@pytest.mark.parametrize(("kind", "set_code", "number", "voted"), [
    ("card", "m20", "12", CARD_PRINTING.id),
    ("token", "tm20", "12", TOKEN_PRINTING.id),
    ("token", "tm20", "13", SET_TOKEN.id),
    ("card", "tm20", "12", None),
    ("token", "m20", "12", None),
])
def test_each_kind_is_voted_only_onto_its_printings(kind: str, set_code: str, number: str,
                                                     voted: int | None) -> None:
    outcome = run_calculators(CardRef(7, "Goblin", kind=kind), _evidence(set_code, number), CANDIDATES, EXPANSIONS)
    printings = {v.printing_id for v in outcome.votes if not v.is_no_match}
    assert printings == ({voted} if voted else set()), outcome.results


@pytest.mark.parametrize("reason", ["custom-art", "non-english", "low-dpi", "card-back"])
def test_an_ineligible_card_gets_no_vote_and_its_reason(reason: str) -> None:
    kind = "cardback" if reason == "card-back" else "card"
    outcome = run_calculators(CardRef(7, "Goblin", kind=kind, ineligible=reason), _evidence("m20", "12"), CANDIDATES,
                              EXPANSIONS)
    assert outcome.votes == []
    assert {a.anonymous_id: a.skip_reason for a in outcome.abstentions if a.anonymous_id != SLOW_PATH_ID} == {
        JOIN_KEY_ID: reason, ERA_ID: reason, FALLBACK_ID: reason}
    if reason == "card-back":
        assert outcome.slow_path is None
    else:
        assert outcome.slow_path is not None and outcome.slow_path.skip_reason == TO_REVIEW
        assert outcome.slow_path.detail["ineligible"] == reason
        assert outcome.slow_path.detail["why"][0] == f"ineligible:{reason}"
