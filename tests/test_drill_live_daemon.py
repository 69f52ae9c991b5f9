"""Drill `live-daemon` at a small size (see drills/live_daemon.py; `scripts/drills/live-daemon` runs it bigger)."""

from __future__ import annotations

import pytest

from drills import live_daemon

pytestmark = pytest.mark.slow


def test_live_daemon_streams_cards_to_completed_runs_takes_nothing_twice_and_stops_clean(home, dev):
    figures: dict = {}
    live_daemon.drill(home, dev, figures, cards=20, batch=10)
    print(figures)
    assert figures["runs"] >= 2 and figures["reclaimed_in_claims"] >= 1
