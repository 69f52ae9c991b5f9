"""Drill `remote` at a small size (see drills/remote.py; `python -m drills remote` streams 500 cards): a 429 storm, a
lockout and its acknowledgement, every card done once, the server-side rate never above the limit.

24 cards in batches of 8 give each phase (before the storm, between the storm and the lockout, after the
acknowledgement) a batch of its own. The drill's closing Ctrl-C is left out here: a clean stop of `stage-e dev` is
tests/drills/test_live_daemon.py's claim, not this drill's.
"""

from __future__ import annotations

import pytest

from drills import remote

pytestmark = pytest.mark.slow


def test_a_stream_from_s3_survives_a_storm_and_a_lockout_within_the_rate():
    figures = remote.run(cards=24, batch=8, rate=7.0, storm=8, timeout=900, ctrl_c=False)
    print(figures)
    assert figures["max_1s"] <= 7 and figures["halvings"] >= 1 and figures["doubles"] == 0
