"""The load governor and the envelope live, with the project's defaults, at a small size (`drills/governor.py`;
`scripts/drills/governor` runs it bigger): a host doing the work it was sized for streams without a trip, and a host
really overloaded by CPU hogs at twice the core count trips."""

from __future__ import annotations

import pytest

from drills import governor

pytestmark = pytest.mark.slow


def test_the_defaults_stream_without_a_trip_and_explain_their_workers(home):
    figures: dict = {}
    try:
        governor.stream(home, figures, cards=100, timeout=90)
    except governor.HostBusy as busy:
        pytest.skip(f"{busy}: the no-trip promise is for a host doing the work it was sized for")
    assert figures["trips"] == 0


def test_cpu_hogs_at_twice_the_core_count_trip_the_envelope(home):
    figures: dict = {}
    governor.overload(home, figures, cards=240, timeout=240)
    assert figures["trips"] == 1 and figures["observed"] >= figures["ceiling"]  # rounded; the drill checks >
