"""Drill `live-daemon` at a small size (see drills/live_daemon.py; `python -m drills live-daemon` runs it bigger)."""

from __future__ import annotations

from drills import live_daemon


def test_live_daemon_streams_cards_to_completed_runs_takes_nothing_twice_and_stops_clean():
    figures = live_daemon.run(cards=20, batch=10)
    print(figures)
    assert figures["runs"] >= 2 and figures["reclaimed_in_claims"] >= 1
