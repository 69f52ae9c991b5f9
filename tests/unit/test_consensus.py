"""Weighted consensus under the `funnel` and `machine-quorum` policies."""

from __future__ import annotations

import pytest

from stage_e_dagster.domain import consensus
from stage_e_dagster.domain.consensus import NO_MATCH, CastVote, Resolution, resolve


def machine(printing_id: int | None, voter: str = "stage-d-join-key-v1") -> CastVote:
    return CastVote(printing_id, printing_id is None, "ocr", voter)


def user(printing_id: int | None, voter: str = "user-1") -> CastVote:
    return CastVote(printing_id, printing_id is None, "user", voter)


def admin(printing_id: int | None, voter: str = "admin-1") -> CastVote:
    return CastVote(printing_id, printing_id is None, "admin", voter)


JK, FB, ART = "stage-d-join-key-v1", "stage-d-fallback-v1", "stage-d-art-v1"


def status(resolution: Resolution) -> tuple[str, int | None]:
    return resolution.printing_status, resolution.resolved_printing_id


@pytest.mark.parametrize(
    ("votes", "expected"),
    [
        ([], ("unresolved", None)),
        ([machine(1, JK), machine(1, FB)], ("unresolved", None)),  # machine-only never resolves
        ([machine(1, JK), machine(1, FB), machine(1, ART)], ("unresolved", None)),
        ([machine(None, JK), machine(None, FB)], ("unresolved", None)),
        ([user(1), machine(1, JK), machine(1, FB)], ("resolved", 1)),  # 1 + 1.0 = 2.0, share 1.0
        ([user(1), machine(1, JK)], ("unresolved", None)),  # 1.5 < 2
        ([user(1), user(1, "user-2")], ("resolved", 1)),
        ([admin(1)], ("resolved", 1)),  # 5 alone
        ([admin(None)], ("no_match", None)),
        ([user(None), user(None, "user-2"), machine(1, JK)], ("no_match", None)),  # 2 / 2.5 = 0.8
        # share below 0.6: 2 of 2 + 1.0 + 1.0 = 0.5
        ([user(1), user(1, "user-2"), machine(2, JK), machine(2, FB), machine(3, JK), machine(3, FB)],
         ("unresolved", None)),
        ([admin(1), user(1), admin(2, "admin-2")], ("unresolved", None)),  # 6 / 11 = 0.55
        ([user(1), user(1, "user-2"), user(1, "user-4"), user(2, "user-3")], ("resolved", 1)),  # 3/4
        ([admin(1), user(2), user(2, "user-2")], ("resolved", 1)),  # 5 / 7 = 0.71
        ([admin(1), admin(2, "admin-2")], ("unresolved", None)),
    ],
)
def test_funnel(votes: list[CastVote], expected: tuple[str, int | None]) -> None:
    assert status(resolve(votes)) == expected


def test_machine_weight_is_capped_per_outcome() -> None:
    votes = [user(1), machine(1, JK), machine(1, FB), machine(1, ART)]
    assert resolve(votes).weights == {1: 2.0}


def test_conflicting_humans_exclude_machine_weight() -> None:
    # Humans split 2 to 1: the machines' 1.0 for printing 1 is left out of the weights.
    votes = [user(1), user(1, "user-2"), user(2, "user-3"), machine(1, JK), machine(1, FB)]
    resolution = resolve(votes)
    assert resolution.weights == {1: 2.0, 2: 1.0}
    assert status(resolution) == ("resolved", 1)
    # Machines cannot tip a human split: 1 vs 1 + 1.0 would otherwise resolve 2 (2.0 of 3.0 = 0.67).
    split = [user(1), user(2, "user-2"), machine(2, JK), machine(2, FB)]
    assert resolve(split).weights == {1: 1.0, 2: 1.0}
    assert status(resolve(split)) == ("unresolved", None)


def test_repeated_identical_vote_counts_once() -> None:
    assert resolve([user(1), user(1)]).weights == {1: 1.0}


def test_no_match_outcome_weight_key() -> None:
    assert resolve([user(None), machine(3)]).weights == {NO_MATCH: 1.0, 3: 0.5}


@pytest.mark.parametrize(
    ("votes", "expected"),
    [
        ([machine(1, JK), machine(1, FB)], ("resolved", 1)),  # two calculators agree
        ([machine(None, JK), machine(None, FB)], ("no_match", None)),
        ([machine(1, JK), machine(1, JK)], ("unresolved", None)),  # one voter twice is not a quorum
        ([machine(1, JK), machine(2, FB)], ("unresolved", None)),
        ([machine(1, JK), machine(1, FB), user(2)], ("unresolved", None)),  # a human contradicts
        ([machine(1, JK), machine(1, FB), user(1)], ("resolved", 1)),
        ([machine(1, JK), machine(1, FB), machine(2, ART), machine(2, "x")], ("unresolved", None)),
        ([admin(2)], ("resolved", 2)),  # otherwise the weighted rule
        ([machine(1, JK), machine(1, FB), admin(2)], ("resolved", 2)),
    ],
)
def test_machine_quorum(votes: list[CastVote], expected: tuple[str, int | None]) -> None:
    assert status(resolve(votes, policy="machine-quorum")) == expected


def test_resolution_explains_itself() -> None:
    resolution = resolve([user(1), machine(1, JK), machine(1, FB)])
    assert (resolution.winner, resolution.reason, resolution.policy) == (1, "weighted", "funnel")
    assert resolve([machine(1, JK), machine(1, FB)]).reason == "weight-below-minimum"
    assert resolve([machine(1, JK), machine(1, FB)], "machine-quorum").reason == "machine-quorum"


def test_unknown_policy_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown consensus policy 'quorum'.*funnel, machine-quorum"):
        resolve([], policy="quorum")


def test_cast_vote_validation() -> None:
    with pytest.raises(ValueError, match="unknown vote source"):
        CastVote(1, False, "robot", "x")
    with pytest.raises(ValueError, match="exactly one"):
        CastVote(1, True, "user", "x")


MQ = "machine-quorum"


@pytest.mark.parametrize(("votes", "policy", "expected"), [
    ([], "funnel", Resolution("unresolved", None, {}, None, "no-votes", "funnel")),
    ([], MQ, Resolution("unresolved", None, {}, None, "no-votes", MQ)),
    ([user(1), machine(1, JK)], MQ, Resolution("unresolved", None, {1: 1.5}, None, "weight-below-minimum", MQ)),
    ([admin(1), admin(2, "admin-2")], MQ,
     Resolution("unresolved", None, {1: 5.0, 2: 5.0}, None, "share-below-minimum", MQ)),
    ([admin(None)], MQ, Resolution("no_match", None, {NO_MATCH: 5.0}, NO_MATCH, "weighted", MQ)),
    ([admin(7), machine(7, JK)], MQ, Resolution("resolved", 7, {7: 5.5}, 7, "weighted", MQ)),
    ([machine(None, JK), machine(None, FB)], MQ,
     Resolution("no_match", None, {NO_MATCH: 1.0}, NO_MATCH, "machine-quorum", MQ)),
    ([machine(7, JK), machine(7, FB), user(7)], MQ, Resolution("resolved", 7, {7: 2.0}, 7, "machine-quorum", MQ)),
    # Humans split: a printing only machines voted for weighs nothing and is not listed.
    ([user(1), user(2, "user-2"), machine(3, JK)], "funnel",
     Resolution("unresolved", None, {1: 1.0, 2: 1.0}, None, "weight-below-minimum", "funnel")),
], ids=["none", "none-quorum", "light", "split", "no-match", "weighted", "quorum-no-match", "quorum", "human-split"])
def test_every_resolution_carries_its_weights_winner_reason_and_policy(votes: list[CastVote], policy: str,
                                                                       expected: Resolution) -> None:
    assert resolve(votes, policy) == expected


def test_the_funnel_wants_a_human_vote_even_if_machine_weight_alone_could_carry_a_card(monkeypatch) -> None:
    """The human requirement is a rule of its own, not a side effect of the machine cap being under the minimum
    weight: with the cap raised to 2, two machines carry the weight and the share, and the funnel still says no."""
    monkeypatch.setattr(consensus, "MACHINE_CAP_PER_OUTCOME", 2.0)
    votes = [machine(7, JK), machine(7, FB), machine(7, ART), machine(7, "stage-d-other-v1")]
    assert resolve(votes) == Resolution("unresolved", None, {7: 2.0}, None, "no-human-vote", "funnel")
    assert resolve(votes, MQ).printing_status == "resolved"
