"""The envelope live, with the project's defaults, at a small size (`drills/governor.py`): a host really overloaded
by CPU hogs at twice the core count trips. The defaults' other promise, no trip under the work they were sized for,
is proved with a controlled load signal in tests/db/test_governor.py; its live part (`python -m drills governor
--parts stream`) needs a quiet host and stays a drill."""

from __future__ import annotations

from drills import governor


def test_cpu_hogs_at_twice_the_core_count_trip_the_envelope():
    figures = governor.run(overload_cards=240, overload_timeout=240, parts="overload")
    assert figures["overload_trips"] == 1 and figures["overload_observed"] >= figures["overload_ceiling"]
