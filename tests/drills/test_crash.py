"""Drill `crash` at a small size: one `kill -9` of a live run's worker mid-Stage C (drills/crash.py says what is
checked; `python -m drills crash` kills several runs at a bigger size)."""

from __future__ import annotations

from drills import crash


def test_a_killed_run_fails_truthfully_frees_its_slot_and_its_cards_end_processed_once():
    figures = crash.run(cards=30, batch=15, kills=1)
    print(figures)
    assert figures["kills"] == 1
    assert figures["rerun_cards"] == "15/15", "a later batch finished every card of the killed one"
