"""Drill 4 (database outage) at a small size; `scripts/drills/outage` runs it bigger. See drills/outage.py."""

from __future__ import annotations

import pytest

from drills.outage import lock_kill, postgres_restart

pytestmark = pytest.mark.slow


def test_a_worker_whose_lock_session_is_killed_stops_ocr_and_its_cards_are_done_by_a_replacement(home):
    figures: dict = {}
    try:
        lock_kill(home, cards=40, figures=figures)
    finally:
        print(figures)


def test_postgres_stopped_under_live_runs_ends_them_and_every_card_is_processed_once_it_is_back(home):
    figures: dict = {}
    try:
        postgres_restart(home, cards=6, batch=3, figures=figures)
    finally:
        print(figures)
