"""The trip promise under a live daemon (`stage-e dev`): an open trip stops every run, and the halted cards
come back on their own after the acknowledgement.

Every passive run is forced over the envelope's memory bar (`STAGE_E_RSS_CEILING_MB=1`) while the card stream has
queued several batches behind a micro_batch concurrency limit of 2. The oracle is the database (ledger rows,
envelope trips, evidence) and Dagster's run records, not the code under test:

- a run that recorded a trip opened its ledger row before the first trip existed (it was already running); every
  run that opened later ended `halted` naming a trip, recorded none, and no card has evidence;
- the operator restarts `stage-e dev` with the default ceiling: nothing starts while the trip is open; after
  `stage-e trips ack` the stream (not the sweep, which is scheduled far away) processes every card, once.
"""

from __future__ import annotations

import datetime as dt

import pytest

from testkit.corpus import demo_corpus_cli
from testkit.live import wait_for

pytestmark = pytest.mark.slow

CARDS, BATCH = 20, 5
_RUNS = ('{ runsOrError(filter: {pipelineName: "micro_batch"}) { ... on Runs { results { runId status '
         'startTime } } } }')



def test_an_open_trip_halts_every_later_run_and_the_ack_brings_the_cards_back(home, dev):
    demo_corpus_cli(home, CARDS)
    home.env.update({"STAGE_E_STREAMING": "on", "STAGE_E_BATCH_SIZE": str(BATCH), "STAGE_E_OCR_MAX_SLOTS": "1",
                     "STAGE_E_STREAM_INTERVAL_SECONDS": "5", "STAGE_E_SWEEP_CRON": "0 0 1 1 *",
                     "STAGE_E_RSS_CEILING_MB": "1"})

    tripping = dev()
    tripping.wait_ready()
    # The first tick queues CARDS / BATCH runs; two start, trip, and the rest start behind them and halt.
    wait_for(lambda: home.scalar("SELECT count(*) FROM dispatch_ledger WHERE status <> 'running'") >= CARDS // BATCH
             and home.scalar("SELECT count(*) FROM dispatch_ledger WHERE status = 'running'") == 0,
             240, "every queued batch to end", every=tripping.record)
    wait_for(lambda: all(r["status"] in ("SUCCESS", "FAILURE")
                         for r in tripping.graphql(_RUNS)["runsOrError"]["results"]), 60, "the runs to end")
    runs = {r["runId"]: r["status"] for r in tripping.graphql(_RUNS)["runsOrError"]["results"]}
    tripping.stop()

    trips = home.rows("SELECT id, run_id, tripped_at FROM envelope_trip")
    ledger = {run: (status, reason, opened) for run, status, reason, opened in home.rows(
        "SELECT run_id, status, failure_reason, started_at FROM dispatch_ledger")}
    assert trips and set(ledger) == set(runs)
    first = min(t[2] for t in trips)
    tripped = {t[1] for t in trips}
    assert len(trips) == len(tripped), "one trip per run"
    for run in tripped:  # it was already running when the first trip happened, and failed on the breach
        assert ledger[run][2] <= first + dt.timedelta(seconds=1) and runs[run] == "FAILURE", (run, ledger[run])
        assert ledger[run][0] == "halted" and "envelope tripped" in ledger[run][1]
    later = set(runs) - tripped
    assert len(later) >= CARDS // BATCH - 2, "the runs queued behind the concurrency limit of 2 started later"
    trip_ids = {t[0] for t in trips}
    for run in later:  # it started behind an open trip: halted at its gate, no trip of its own, no work
        status, reason, _ = ledger[run]
        assert runs[run] == "SUCCESS" and status == "halted" and "halted before any work" in reason
        assert any(trip in reason for trip in trip_ids), reason
    assert home.scalar("SELECT count(*) FROM image_evidence") == 0

    # The operator raises the ceiling (the default) and restarts; the open trip still holds everything.
    del home.env["STAGE_E_RSS_CEILING_MB"]
    fixed = dev()
    fixed.wait_ready()
    started = len(runs)
    wait_for(lambda: fixed.graphql("{ version }"), 30, "the webserver")
    assert home.scalar("SELECT count(*) FROM dispatch_ledger") == started, "nothing starts while a trip is open"
    for trip in sorted(trip_ids):
        home.stage_e("trips", "ack", trip, "--note", "memory ceiling back to its default")
    wait_for(lambda: home.scalar("SELECT count(*) FROM card_work") == 0
             and home.scalar("SELECT count(*) FROM dispatch_ledger WHERE status = 'running'") == 0,
             300, "every halted card to be processed after the acknowledgement", every=fixed.record)

    assert home.scalar("SELECT count(DISTINCT card_id) FROM image_evidence") == CARDS
    assert home.scalar("SELECT count(*) FROM envelope_trip") == len(trips), "no new trip after the acknowledgement"
    triggers = home.rows("SELECT DISTINCT trigger FROM dispatch_ledger WHERE status = 'completed'")
    assert triggers == [("card-event",)], "the stream, not the sweep, brought the cards back"
    fixed.stop()
