"""Every threshold, floor and cap of the pure core on both sides of its edge: the value at the edge and the nearest
value past it, so a changed constant or a `>` turned `>=` fails here. (The evidence extractors and the calculators
have their own edge tests beside them; timings are left to the tests that drive them.)"""

from __future__ import annotations

import pytest

from stage_e_dagster.domain import consensus, envelope, governor, kinds, remote, review_card, work
from stage_e_dagster.domain.batching import split_batches
from stage_e_dagster.domain.consensus import CastVote, resolve

JOIN_KEY, FALLBACK, ERA = "stage-d-join-key-v1", "stage-d-fallback-v1", "stage-d-era-v1"


def _users(printing: int, count: int, start: int = 0) -> list[CastVote]:
    return [CastVote(printing, False, "user", f"person-{start + i}") for i in range(count)]


def _machines(printing: int, voters: tuple[str, ...]) -> list[CastVote]:
    return [CastVote(printing, False, consensus.MACHINE_SOURCE, voter) for voter in voters]


# -- consensus ------------------------------------------------------------------------------------------------------
def test_the_minimum_weight_is_met_at_two_and_missed_just_under() -> None:
    assert consensus.MIN_WEIGHT == 2.0
    assert resolve(_users(7, 2)).printing_status == "resolved"  # 2 x 1.0: at the edge
    below = resolve(_users(7, 1) + _machines(7, (JOIN_KEY,)))  # 1.0 + 0.5
    assert (below.printing_status, below.reason) == ("unresolved", "weight-below-minimum")


def test_the_minimum_share_is_met_at_three_fifths_and_missed_just_under() -> None:
    assert consensus.MIN_SHARE == 0.6
    at = resolve(_users(7, 3) + _users(8, 2, start=10))  # 3 / 5 = 0.6
    assert (at.printing_status, at.resolved_printing_id) == ("resolved", 7)
    below = resolve(_users(7, 4) + _users(8, 3, start=10))  # 4 / 7 = 0.57
    assert (below.printing_status, below.reason) == ("unresolved", "share-below-minimum")


def test_machine_weight_per_outcome_is_capped_at_one() -> None:
    assert consensus.MACHINE_CAP_PER_OUTCOME == 1.0
    two = resolve(_users(7, 1) + _machines(7, (JOIN_KEY, FALLBACK)))  # 2 x 0.5: at the cap
    three = resolve(_users(7, 1) + _machines(7, (JOIN_KEY, FALLBACK, ERA)))  # 3 x 0.5, capped
    assert two.weights == three.weights == {7: 2.0}


def test_a_machine_quorum_takes_two_calculators_and_one_is_not_enough() -> None:
    one = resolve(_machines(7, (JOIN_KEY,)), policy="machine-quorum")
    two = resolve(_machines(7, (JOIN_KEY, FALLBACK)), policy="machine-quorum")
    assert one.printing_status == "unresolved"
    assert (two.printing_status, two.reason) == ("resolved", "machine-quorum")
    assert resolve(_machines(7, (JOIN_KEY, FALLBACK))).printing_status == "unresolved", "never under the funnel"


# -- the envelope's bars --------------------------------------------------------------------------------------------
CEILINGS = envelope.Ceilings(host_load=4.0, rss_mb=1000.0, failure_rate=0.1, failure_min_loads=20)


@pytest.mark.parametrize(("signals", "bar"), [
    (envelope.Signals(host_load=4.0), None),
    (envelope.Signals(host_load=4.01), "host_load"),
    (envelope.Signals(rss_mb={1: 1000.0}), None),
    (envelope.Signals(rss_mb={1: 1000.5, 2: 10.0}), "rss"),
    (envelope.Signals(image_loads=envelope.LoadCounts(loads=19, failures=19)), None),  # too few loads to judge
    (envelope.Signals(image_loads=envelope.LoadCounts(loads=20, failures=2)), None),  # rate at the ceiling
    (envelope.Signals(image_loads=envelope.LoadCounts(loads=20, failures=3)), envelope.FAILURE_RATE_BAR),
], ids=["load-at", "load-over", "rss-at", "rss-over", "loads-under-minimum", "rate-at", "rate-over"])
def test_each_bar_trips_only_strictly_above_its_ceiling(signals: envelope.Signals, bar: str | None) -> None:
    breach = envelope.evaluate_bars(signals, CEILINGS)
    assert (breach.bar if breach else None) == bar


def test_a_minimum_of_zero_loads_still_needs_one_load() -> None:
    none_yet = envelope.Signals(image_loads=envelope.LoadCounts(loads=0, failures=0))
    one = envelope.Signals(image_loads=envelope.LoadCounts(loads=1, failures=1))
    ceilings = envelope.Ceilings(host_load=4.0, failure_rate=0.1, failure_min_loads=0)
    assert envelope.evaluate_bars(none_yet, ceilings) is None
    assert envelope.evaluate_bars(one, ceilings).bar == envelope.FAILURE_RATE_BAR


# -- the governor ---------------------------------------------------------------------------------------------------
def _governor(workers: int, **options) -> governor.Governor:
    made = governor.Governor(target=3.0, min_workers=1, max_workers=3, cooldown_seconds=0.0, settle_seconds=0.0,
                             **options)
    made.workers = workers
    return made


def test_the_governor_steps_down_only_above_its_target_and_never_below_its_floor() -> None:
    at = _governor(2)
    at.observe(3.0, now=10.0)
    assert at.workers == 3, "a load at the target is calm: one more worker"
    over = _governor(2)
    over.observe(3.01, now=10.0)
    assert over.workers == 1
    floor = _governor(1)
    floor.observe(9.0, now=10.0)
    assert floor.workers == 1


def test_the_governor_steps_up_below_its_target_and_never_above_its_cap() -> None:
    under = _governor(2)
    under.observe(1.0, now=10.0)
    assert under.workers == 3
    cap = _governor(3)
    cap.observe(1.0, now=10.0)
    assert cap.workers == 3


# -- eligibility, the fetch pace, retries, review keys, batches --------------------------------------------------------
@pytest.mark.parametrize(("size", "under"), [
    ((497, 693), False),  # 200 dpi on both axes of a 63 x 88 mm card, rounded up to whole pixels
    ((496, 693), True),
    ((497, 692), True),
    ((693, 497), False),  # on its side alike
    ((0, 693), False),  # an unknown size is never under
    ((1, 1), True),
], ids=["at", "short-side-under", "long-side-under", "sideways", "unknown", "tiny"])
def test_the_dpi_floor_at_its_edge(size: tuple[int, int], under: bool) -> None:
    assert kinds.DEFAULT_MIN_DPI == 200
    assert kinds.under_dpi(*size, kinds.DEFAULT_MIN_DPI) is under


def test_the_shared_pace_halves_down_to_its_floor_and_recovers_up_to_the_rate() -> None:
    rules = remote.PaceRules()
    assert rules.halved(2 * rules.floor) == rules.floor
    assert rules.halved(rules.floor) == rules.floor, "never below the floor"
    assert rules.recovered(0.5) == 1.0
    assert rules.recovered(1.0) == 1.0, "never above the configured rate"


def test_retry_waits_grow_to_their_cap_and_no_further() -> None:
    first, base, cap = work.retry_backoff("failed")
    assert (first, base, cap) == (0.0, work.RETRY_BASE_SECONDS, work.RETRY_CAP_SECONDS)
    assert work.retry_backoff("halted") == (0.0, 0.0, 0.0)
    assert work.retry_backoff("throttled") == (work.THROTTLE_RETRY_SECONDS,) * 3


def test_only_the_first_nine_candidates_get_a_key() -> None:
    assert review_card.KEYED_CANDIDATES == 9
    candidates = [review_card.Candidate(printing_id=i, scryfall_id=f"id-{i}", set_code=f"s{i:02d}",
                                        collector_number=str(i), set_name=None, released_at=None,
                                        has_reference_symbol=False) for i in range(11)]
    keys = [c.key for c in review_card.order_candidates(candidates, [])]
    assert keys[:9] == [str(i) for i in range(1, 10)] and keys[9:] == [None, None]


def test_a_batch_size_of_one_is_the_smallest() -> None:
    assert split_batches([1, 2, 3], 1) == [(1,), (2,), (3,)]
    with pytest.raises(ValueError):
        split_batches([1, 2, 3], 0)
