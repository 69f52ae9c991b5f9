"""The envelope live, with the project's defaults, at a small size (`drills/governor.py`): a host really overloaded
by CPU hogs trips. The defaults' other promise, no trip under the work they were sized for, is proved with a
controlled load signal in tests/db/test_governor.py; its live part (`python -m drills governor --parts stream`)
needs a quiet host and stays a drill.

Here the corpus is made first and the hogs run at nice 19 (`wait_over_ceiling`): they lift the load average (it
counts runnable processes whatever their priority) while taking almost no CPU from the rest of the suite. There are
twice as many as the ceiling, so the 1-minute load passes the ceiling within about half a minute even on a quiet
host (it only approaches the number of runnable processes); the run starts once it has, so its first check trips
and a few cards are enough to leave some behind. The drill script keeps hogs at twice the core count, at normal
priority, beside a run of 400 cards.
"""

from __future__ import annotations

from drills import governor
from stage_e_dagster.host import default_load_ceiling


def test_cpu_hogs_over_the_default_ceiling_trip_the_envelope_and_the_run_stops_with_cards_left():
    hogs = int(2 * default_load_ceiling())
    figures = governor.run(overload_cards=6, overload_timeout=300, parts="overload", hogs=hogs,
                           wait_over_ceiling=True)
    print(figures)
    assert figures["overload_trips"] == 1 and figures["overload_observed"] >= figures["overload_ceiling"]
