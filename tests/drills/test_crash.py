"""Drill `crash` at a small size: one `kill -9` of a live run's worker mid-Stage C (drills/crash.py says what is
checked; `python -m drills crash` kills several runs at a bigger size).

One batch of ten cards is enough: it is killed 25-85% through, and the same cards must come back and be finished by
a later batch. The drill's closing Ctrl-C is left out here: the killed run's processes are checked gone right after
the kill, and a clean stop of `stage-e dev` is tests/drills/test_live_daemon.py's claim.
"""

from __future__ import annotations

from drills import crash


def test_a_killed_run_fails_truthfully_frees_its_slot_and_its_cards_end_processed_once():
    figures = crash.run(cards=10, batch=10, kills=1, ctrl_c=False)
    print(figures)
    assert figures["kills"] == 1
    assert figures["rerun_cards"] == "10/10", "a later batch finished every card of the killed one"
