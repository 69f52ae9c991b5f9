"""The load governor's pure steps: when it takes a worker away or gives one back, its cooldown and settling time,
its floor and cap, and the one line that explains a batch's workers."""

from __future__ import annotations

import pytest

from stage_e_dagster.domain.governor import Governor, GovernorStep


def test_shrinks_one_at_a_time_above_the_target_never_below_the_floor() -> None:
    gov = Governor(target=2.0, max_workers=3, cooldown_seconds=10, settle_seconds=30)
    assert gov.workers == 3
    assert gov.observe(2.5, now=0).workers == 2
    assert gov.observe(9.0, now=5) is None  # cooling down: the load average lags the last step
    assert gov.observe(9.0, now=10).workers == 1
    assert gov.observe(9.0, now=100) is None and gov.workers == 1  # never below one worker
    assert gov.observe(None, now=101) is None  # an unreadable load changes nothing
    assert [s.reason for s in gov.steps] == ["load 2.50 > target 2", "load 9.00 > target 2"]


def test_grows_back_one_at_a_time_once_load_stayed_under_the_target() -> None:
    gov = Governor(target=2.0, max_workers=3, cooldown_seconds=10, settle_seconds=30)
    gov.observe(5.0, now=0)
    gov.observe(5.0, now=10)
    assert gov.workers == 1
    assert gov.observe(1.0, now=20) is None  # calm for 0 s
    assert gov.observe(2.0, now=49) is None  # at the target counts as calm; 29 s so far
    assert gov.observe(1.5, now=50).workers == 2
    assert gov.observe(1.5, now=60) is None  # calm restarts after each step
    assert gov.observe(2.1, now=75) is not None and gov.workers == 1  # a spike resets calm and shrinks again
    assert [step.workers for step in gov.steps] == [2, 1, 2, 1]


def test_a_one_slot_host_runs_one_worker_whatever_the_load() -> None:
    gov = Governor(target=2.0, max_workers=1)
    assert gov.observe(50.0, now=0) is None and gov.workers == 1
    with pytest.raises(ValueError):
        Governor(target=2.0, max_workers=0)


def test_explain_names_the_cap_the_target_the_peak_and_each_step() -> None:
    gov = Governor(target=2.0, max_workers=3, cooldown_seconds=10, settle_seconds=30)
    assert gov.explain() == "up to 3 OCR worker(s) (the slot cap), load target 2; load unreadable, no step"
    gov.observe(1.2, now=0)
    assert gov.explain() == "up to 3 OCR worker(s) (the slot cap), load target 2, peak load 1.20; no step"
    gov.observe(3.5, now=12)
    gov.observe(0.9, now=30)
    gov.observe(0.9, now=60)
    assert gov.load_peak == 3.5
    assert gov.explain() == ("up to 3 OCR worker(s) (the slot cap), load target 2, peak load 3.50; "
                             "3->2 at 12 s (load 3.50 > target 2); 2->3 at 60 s (load <= target 2 for 30 s)")
    floor = Governor(target=2.0, max_workers=1)
    floor.observe(8.0, now=0)
    assert floor.explain().endswith("peak load 8.00; no step: already at the floor of 1")


@pytest.mark.parametrize("bounds", [{"max_workers": 0}, {"max_workers": 3, "min_workers": 0}],
                         ids=["no-cap", "no-floor"])
def test_a_governor_without_one_worker_at_its_cap_or_floor_is_refused(bounds: dict[str, int]) -> None:
    with pytest.raises(ValueError, match="^a governor runs at least one worker$"):
        Governor(target=2.0, **bounds)


def test_a_floor_above_the_cap_is_lowered_to_it() -> None:
    gov = Governor(target=2.0, max_workers=2, min_workers=5)
    assert (gov.min_workers, gov.workers) == (2, 2)


def test_each_step_records_when_since_the_start_how_many_workers_the_load_and_why() -> None:
    gov = Governor(target=2.0, max_workers=3, cooldown_seconds=10, settle_seconds=30, started=100.0)
    down = gov.observe(2.567, now=112.25)
    assert down == GovernorStep(12.25, 2, 2.567, "load 2.57 > target 2") and gov.steps == [down]
    assert down.as_dict() == {"at_s": 12.2, "workers": 2, "load": 2.57, "reason": "load 2.57 > target 2"}
    gov.observe(1.0, now=120.0)
    up = gov.observe(1.234, now=150.0)
    assert up == GovernorStep(50.0, 3, 1.234, "load <= target 2 for 30 s") and gov.steps == [down, up]
    assert gov.explain().endswith("3->2 at 12 s (load 2.57 > target 2); 2->3 at 50 s (load <= target 2 for 30 s)")


def test_the_cooldown_counts_from_the_last_step_not_from_zero() -> None:
    gov = Governor(target=2.0, max_workers=3, cooldown_seconds=10, settle_seconds=0, started=1000.0)
    assert gov.observe(5.0, now=1000.0).workers == 2
    assert gov.observe(5.0, now=1009.9) is None, "9.9 s after the last step: still cooling"
    assert gov.observe(5.0, now=1010.0).workers == 1, "10 s after it: cooled"


def test_calm_counts_from_the_last_step_up_and_restarts_after_a_spike() -> None:
    gov = Governor(target=2.0, max_workers=3, cooldown_seconds=10, settle_seconds=30)
    gov.observe(5.0, now=0)
    gov.observe(5.0, now=10)
    assert gov.workers == 1
    gov.observe(1.0, now=20)
    assert gov.observe(1.0, now=50).workers == 2
    assert gov.observe(1.0, now=60) is None, "calm for 10 s since the step up"
    assert gov.observe(1.0, now=80).workers == 3, "calm for 30 s since the step up, not since 60 s"
    gov.observe(5.0, now=90)
    assert gov.workers == 2
    assert gov.observe(1.0, now=100) is None, "the spike at 90 s ended the calm"
    assert gov.observe(1.0, now=129) is None
    assert gov.observe(1.0, now=130).workers == 3


def test_the_peak_load_is_the_highest_reading_whatever_the_order() -> None:
    gov = Governor(target=9.0, max_workers=2)
    for load in (1.5, 4.25, 0.5, None, 3.0):
        gov.observe(load, now=0)
    assert gov.load_peak == 4.25


@pytest.mark.parametrize(("load", "told"), [
    (2.0, "peak load 2.00; no step"),  # at the target, on the floor: nothing to explain
    (1.0, "peak load 1.00; no step"),
    (2.01, "peak load 2.01; no step: already at the floor of 1"),
])
def test_explain_names_the_floor_only_when_the_load_was_over_the_target(load: float, told: str) -> None:
    gov = Governor(target=2.0, max_workers=1)
    gov.observe(load, now=0)
    assert gov.explain() == f"up to 1 OCR worker(s) (the slot cap), load target 2, {told}"

