"""Drill `soak` at a small size under a live `stage-e dev` (drills/soak.py says what it proves): cards arriving in
waves through a watched source (here two waves of one batch each); every card processed by exactly one completed
batch, the ledger agreeing with Dagster, nothing left behind, nothing growing from wave to wave.

At this size the drill skips its forced trip (one `stage-e dev` start instead of three): tests/live/test_live_trip.py
proves the trip and its acknowledgement live, and `python -m drills soak` runs the whole drill. The host-load bar is
raised (the envelope is not the subject), so a busy host cannot trip it.
"""

from drills import soak, verdict


def test_soak_small():
    figures = soak.run(cards=8, batch=4, waves=2, wave_timeout=300, forced_trip=False)
    print(verdict.line("soak", None, figures))  # the figures, shown with -s
    assert figures["cards"] == 8 and figures["quiet_points"] == 2
    assert figures["completed"] >= 2 and figures["halted"] == 0 and figures["voted"] + figures["review"] >= 8
    assert figures["workers_judged"] >= 1 and "worker_rss_growth" in figures, "the OCR workers' memory was measured"
