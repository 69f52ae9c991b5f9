"""The soak drill at a small size, under a live `stage-e dev` (see drills/soak.py for what it proves): issue 10's
trip promise (one trip per running run, every later run halted at its gate, the cards back after the ack without
the sweep) and issue 11's soak (every card evidenced and voted or in review, no run left `running`)."""

import pytest

from drills import soak

pytestmark = pytest.mark.slow


def test_soak_small():
    figures: dict = {}
    soak.run(figures, cards=20, batch=4, wave_timeout=300)
    assert figures["cards"] == 20 and figures["trips"] >= 1 and figures["halted_at_gate"] >= 1
