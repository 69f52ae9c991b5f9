"""Drill `live-daemon` at a small size (see drills/live_daemon.py; `python -m drills live-daemon` runs it bigger):
twelve cards in batches of six are enough for two claims of one draining run, and one of them offered again."""

from __future__ import annotations

from drills import live_daemon


def test_live_daemon_streams_cards_to_completed_runs_takes_nothing_twice_and_stops_clean():
    figures = live_daemon.run(cards=12, batch=6)
    print(figures)
    assert figures["runs"] >= 2 and figures["reclaimed_in_claims"] >= 1
