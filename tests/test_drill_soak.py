"""The soak drill at a small size under a live `stage-e dev` (drills/soak.py says what it proves): cards arriving
in waves through a watched source, a trip forced midway and acknowledged; every card processed by exactly one
completed batch, the ledger agreeing with Dagster, nothing left behind, nothing growing from wave to wave.

The drill raises the host-load bar (the envelope is tests/test_live_trip.py's subject), so a busy host cannot trip it.
"""

import pytest

from drills import soak, verdict

pytestmark = pytest.mark.slow


def test_soak_small():
    figures: dict = {}
    soak.run(figures, cards=12, batch=4, waves=2, wave_timeout=300)
    print(verdict.line("soak", None, figures))  # the figures, shown with -s
    assert figures["cards"] == 12 and figures["trips"] >= 1 and figures["quiet_points"] == 2
    assert figures["completed"] >= 4 and figures["voted"] + figures["review"] >= 12
