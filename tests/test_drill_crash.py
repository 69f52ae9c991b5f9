"""Drill `crash` at a small size: one `kill -9` of a live run's worker mid-Stage C (see drills/crash.py;
`scripts/drills/crash` kills several runs at a bigger size)."""

from __future__ import annotations

import pytest

from drills import crash

pytestmark = pytest.mark.slow


def test_a_killed_run_fails_truthfully_frees_its_slot_and_its_cards_end_processed_once(home, dev):
    figures: dict = {}
    kills = crash.drill(home, dev, figures, cards=30, batch=15, kills=1)
    print(figures)
    assert len(kills) == 1 and kills[0].slot_free_s < crash.SLOT_FREE_BOUND_SECONDS
    assert figures["runs"] >= 2, "the killed batch's cards were finished by another run"
