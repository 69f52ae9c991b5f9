"""Drill 4 (database outage) at a small size; `scripts/drills/outage` runs it bigger. See drills/outage.py.

In `make test` the drill kills a working OCR worker's lock session. Its other half, Postgres stopped under a live
`stage-e dev` with runs in flight, takes about two minutes at any size (the runs' own storage retries bound it), so
it runs in `scripts/drills/outage` only; tests/test_outage.py proves the same promise in the suite for a
`stage-e run` cut off by a Postgres stop.
"""

from __future__ import annotations

import pytest

from drills.outage import lock_kill

pytestmark = pytest.mark.slow


def test_a_worker_whose_lock_session_is_killed_stops_ocr_and_its_cards_are_done_by_a_replacement(home):
    figures: dict = {}
    try:
        lock_kill(home, cards=150, figures=figures)  # seconds of work for two workers on a fast host
    finally:
        print(figures)
