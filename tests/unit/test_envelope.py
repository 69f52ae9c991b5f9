"""The envelope's bars as pure rules: which bar trips, on what value against which ceiling, with what detail,
and which runs are held to them."""

from __future__ import annotations

import pytest

from stage_e_dagster.domain.envelope import Breach, Ceilings, LoadCounts, Signals, enforced, evaluate_bars

CEILINGS = Ceilings(host_load=2.0, rss_mb=1024.0, failure_rate=0.01, failure_min_loads=50)


@pytest.mark.parametrize(
    ("signals", "expected"),
    [
        (Signals(), None),
        (Signals(host_load=2.0), None),  # equal never trips
        (Signals(host_load=2.01), ("host_load", 2.01, 2.0)),
        (Signals(host_load=None, rss_mb={1: 5000.0}), ("rss", 5000.0, 1024.0)),  # unreadable load: bar skipped
        (Signals(rss_mb={1: 1024.0, 2: 10.0}), None),
        (Signals(rss_mb={1: 10.0, 2: 1024.5}), ("rss", 1024.5, 1024.0)),
        (Signals(rss_mb={}), None),  # no readable worker
        (Signals(image_loads=LoadCounts(100, 1)), None),  # exactly 1%
        (Signals(image_loads=LoadCounts(100, 2)), ("image_failure_rate", 0.02, 0.01)),
        (Signals(image_loads=LoadCounts(49, 49)), None),  # fewer than 50 loads: never judged
        (Signals(image_loads=LoadCounts(50, 1)), ("image_failure_rate", 0.02, 0.01)),
        (Signals(image_loads=LoadCounts(0, 0)), None),
        (Signals(image_loads=None), None),  # unreadable database: bar skipped
        (Signals(host_load=9.0, rss_mb={1: 9999.0}, image_loads=LoadCounts(100, 50)), ("host_load", 9.0, 2.0)),
        (Signals(host_load=1.0, rss_mb={1: 9999.0}, image_loads=LoadCounts(100, 50)), ("rss", 9999.0, 1024.0)),
    ],
)
def test_bar_table(signals: Signals, expected: tuple[str, float, float] | None) -> None:
    breach = evaluate_bars(signals, CEILINGS)
    if expected is None:
        assert breach is None
    else:
        assert breach is not None
        assert (breach.bar, breach.observed, breach.ceiling) == pytest.approx(expected)


def test_breach_detail_names_the_worker_and_the_counts() -> None:
    assert evaluate_bars(Signals(rss_mb={41: 2000.0}), CEILINGS).detail == {"pid": 41}
    rate = evaluate_bars(Signals(image_loads=LoadCounts(200, 9)), CEILINGS)
    assert rate.detail == {"loads": 200, "failures": 9}


def test_only_passive_runs_are_held_to_the_envelope() -> None:
    assert enforced("passive") and not enforced("bulk")


def test_a_breach_describes_its_bar_value_and_ceiling() -> None:
    assert Breach("rss", 1500.5, 1024.0).describe() == "envelope tripped: rss observed 1500.5 > ceiling 1024"
    assert evaluate_bars(Signals(host_load=3), CEILINGS) == Breach("host_load", 3.0, 2.0, {})
