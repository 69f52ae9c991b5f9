"""Drill `race` at a small size: 8 processes run the real `micro_batch` job at once on overlapping cards
(drills/race.py says what is checked; `python -m drills race` runs it bigger)."""

from __future__ import annotations

import pytest

from drills import race


@pytest.mark.parametrize(("cards", "size"), [(16, 6), (12, 4), (48, 18)])
def test_overlapping_batches_put_every_card_in_several(cards, size):
    batches = race.overlapping_batches(list(range(cards)), runs=8, size=size)
    assert len(batches) == 8 and all(len(b) == size for b in batches)
    seen = [sum(card in b for b in batches) for card in range(cards)]
    assert min(seen) >= 2


def test_eight_concurrent_micro_batch_runs_over_overlapping_cards():
    figures = race.run(cards=12, runs=8, batch=4, slots=2)
    print(figures)
    assert figures["failed_runs"] == 0 and figures["unique_violations"] == 0
    assert figures["peak_slot_holders"] <= 2
    assert figures["min_batches_per_card"] >= 2
