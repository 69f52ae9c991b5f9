"""Drill `outage` at a small size; `python -m drills outage` runs it bigger. See drills/outage.py.

Here the drill kills a working OCR worker's lock session. Its other half, Postgres stopped under a live `stage-e dev`
with runs in flight, takes about two minutes at any size (the runs' own storage retries bound it), so it runs in the
drill script only; tests/live/test_outage.py proves the same promise in the suite for a `stage-e run` cut off by a
Postgres stop.
"""

from __future__ import annotations

from drills import outage


def test_a_worker_whose_lock_session_is_killed_stops_ocr_and_its_cards_are_done_by_a_replacement():
    figures = outage.run(lock_cards=60, parts="lock")  # the lone worker's runway after the kill: dozens of cards
    print(figures)
    assert figures["lock_holders"] > 2, "a replacement worker took a slot"
