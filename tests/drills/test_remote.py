"""Drill `remote` at a small size (see drills/remote.py; `python -m drills remote` streams 500 cards): a 429 storm, a
lockout and its acknowledgement, every card done once, the server-side rate never above the limit."""

from __future__ import annotations

import pytest

from drills import remote

pytestmark = pytest.mark.slow


def test_a_stream_from_s3_survives_a_storm_and_a_lockout_within_the_rate():
    figures = remote.run(cards=36, batch=12, rate=7.0, storm=8, timeout=900)
    print(figures)
    assert figures["max_1s"] <= 7 and figures["halvings"] >= 1 and figures["doubles"] == 0
