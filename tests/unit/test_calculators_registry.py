"""The calculator registry's rules: what a calculator's line may say (a machine voter id of the form
`stage-d-<family>-v<N>`, a known routing rule), when its vote is a confident hit (at its hit confidence exactly, not
a hair under; a no-match, another calculator's vote or an abstention never), and which of them vote as machines."""

from __future__ import annotations

import pytest

from stage_e_dagster.domain.calculators.registry import (
    CALCULATORS,
    CONFIDENT_JOIN_KEY,
    UNTIL_HIT,
    Calculator,
    is_confident_hit,
    machine_voters,
)
from stage_e_dagster.domain.decisions import Abstention, Vote


def _never(*_args):  # a decide function no test calls
    raise AssertionError


def test_a_calculator_needs_a_machine_voter_id_and_a_known_routing_rule() -> None:
    calc = Calculator("stage-d-test-thing-v3", _never, runs=UNTIL_HIT)
    assert (calc.family, calc.version, calc.label) == ("stage-d-test-thing", 3, "test-thing")
    with pytest.raises(ValueError, match="is not of the form"):
        Calculator("stage-d-test", _never)
    with pytest.raises(ValueError) as err:
        Calculator("human-v1", _never)
    assert str(err.value) == "calculator id 'human-v1' must start with 'stage-d-'"
    with pytest.raises(ValueError) as err:
        Calculator("stage-d-test-v1", _never, runs="sometimes")
    assert str(err.value) == "calculator stage-d-test-v1: runs must be 'always' or 'until-hit'"


def test_a_hit_is_the_calculators_own_printing_vote_at_or_above_its_hit_confidence() -> None:
    calc = Calculator("stage-d-test-v1", _never, hit_confidence=0.8)
    assert calc.is_hit(Vote(1, calc.id, 5, confidence=0.8))
    assert calc.is_hit(Vote(1, calc.id, 5, confidence=0.8 - 1e-12)), "a float a hair under is the same confidence"
    assert not calc.is_hit(Vote(1, calc.id, 5, confidence=0.79))
    assert not calc.is_hit(Vote(1, "stage-d-other-v1", 5, confidence=0.9))
    assert not calc.is_hit(Vote(1, calc.id, None, confidence=0.9, is_no_match=True))
    assert not calc.is_hit(Abstention(1, calc.id, "ambiguous"))
    assert not calc.is_hit(None)
    never = Calculator("stage-d-test-v1", _never, hit_confidence=None)
    assert not never.is_hit(Vote(1, never.id, 5, confidence=1.0))
    join_key = CALCULATORS[0]
    assert is_confident_hit(Vote(1, join_key.id, 5, confidence=CONFIDENT_JOIN_KEY))
    assert not is_confident_hit(Vote(1, join_key.id, 5, confidence=CONFIDENT_JOIN_KEY - 0.01))


def test_machine_voters_are_the_registrys_machine_calculators_in_order() -> None:
    registry = (Calculator("stage-d-b-v1", _never), Calculator("stage-d-a-v2", _never, machine_voter=False),
                Calculator("stage-d-c-v1", _never))
    assert machine_voters(registry) == ("stage-d-b-v1", "stage-d-c-v1")
    assert machine_voters() == tuple(c.id for c in CALCULATORS)
