"""The trip promise under a live daemon (`stage-e dev`): a run over the envelope records one trip, nothing starts
while it is open, and the operator's acknowledgement brings the halted cards back on their own.

The first claim of the first draining run is forced over the envelope's memory bar (`STAGE_E_RSS_CEILING_MB=1`).
The oracle is the database (ledger rows, trips, evidence) and Dagster's own records (runs, sensor ticks), read
after the thing they check could have happened:

- the tripping run recorded exactly one trip and ended `halted`; its draining run ended without a second claim;
- with the default ceiling restored and `stage-e dev` restarted, the `card_stream` sensor ticks twice while the trip
  is open, each tick skipping with the trip's id, and no run of any kind starts (a broken sensor gate would start a
  draining run here, even though that run would then stop at its own gate: Dagster records a requested run when
  the tick submits it);
- after `stage-e trips ack` every card is processed, once, by the stream;
- the restarted command was started with the embedded server already up (the first one was killed, and killing it
  leaves the server): Ctrl-C leaves no process of it behind and leaves that server running, same postmaster.
  (tests/live/test_live_stream.py proves the other case: a server the command started is stopped with it.)
"""

from __future__ import annotations

import time

import pytest

from testkit.corpus import demo_corpus_cli
from testkit.live import wait_for
from testkit.oracle import stream_env

pytestmark = pytest.mark.slow

CARDS, BATCH = 6, 3
"""Two claims' worth: the first claim trips; after the acknowledgement its halted cards and the never-claimed ones
are all processed by the stream."""
_RUNS = '{ runsOrError { ... on Runs { results { runId status pipelineName startTime } } } }'
_TICKS = ('{ sensorOrError(sensorSelector: {repositoryName: "__repository__", repositoryLocationName: '
          '"stage_e_dagster.definitions", sensorName: "card_stream"}) { ... on Sensor { sensorState { '
          'ticks(limit: 50) { timestamp status skipReason } } } } }')


def _runs(dev) -> list[dict]:
    return dev.graphql(_RUNS)["runsOrError"]["results"]


def _ticks_after(dev, moment: float) -> list[dict]:
    ticks = dev.graphql(_TICKS)["sensorOrError"]["sensorState"]["ticks"]
    return [t for t in ticks if t["timestamp"] > moment]


def test_an_open_trip_halts_the_stream_and_the_ack_brings_the_cards_back(home, dev):
    demo_corpus_cli(home, CARDS)
    # No scheduled run of its own (the invariant checks' every-10-minutes run is read-only and is not held by a
    # trip), so any run that starts comes from the stream. The memory bar trips; a busy shared host must not.
    stream_env(home, BATCH, STAGE_E_RSS_CEILING_MB="1", STAGE_E_HOST_LOAD_CEILING="1000")

    tripping = dev()
    tripping.wait_ready()
    wait_for(lambda: home.scalar("SELECT count(*) FROM envelope_trip") > 0, 240, "the first claim to trip",
             every=tripping.record)
    wait_for(lambda: [r for r in _runs(tripping) if r["pipelineName"] == "stream_drain"]
             and all(r["status"] in ("SUCCESS", "FAILURE") for r in _runs(tripping)), 120, "the runs to end",
             every=tripping.record)
    runs = _runs(tripping)
    tripping.kill()  # how this one stops is not the claim here

    (trip,) = home.rows("SELECT id, run_id, detail->>'recorded_by', bar FROM envelope_trip")
    ledger = home.rows("SELECT run_id, status, failure_reason FROM dispatch_ledger")
    assert [(run, status) for run, status, _ in ledger] == [(trip[1], "halted")], "one claim, halted, no second"
    assert trip[2:] == ("run", "rss") and "envelope tripped" in ledger[0][2]
    assert sum(r["pipelineName"] == "stream_drain" for r in runs) == 1
    assert home.scalar("SELECT count(*) FROM image_evidence") == 0

    # The operator restores the default ceiling and restarts; the open trip still holds everything.
    del home.env["STAGE_E_RSS_CEILING_MB"]
    postmaster = home.server.status().pid
    assert postmaster is not None, "the killed command left the embedded server running"
    fixed = dev()
    fixed.wait_ready()
    restarted = time.time()
    wait_for(lambda: len([t for t in _ticks_after(fixed, restarted) if t["status"] == "SKIPPED"]) >= 2, 120,
             "two card_stream ticks while the trip is open", every=fixed.record)
    held = [t for t in _ticks_after(fixed, restarted) if t["status"] != "STARTED"]
    assert all(t["status"] == "SKIPPED" and trip[0] in (t["skipReason"] or "") for t in held), held
    assert len(_runs(fixed)) == len(runs), "nothing starts while a trip is open"
    assert len(home.rows("SELECT run_id FROM dispatch_ledger")) == 1

    home.stage_e("trips", "ack", trip[0], "--note", "memory ceiling back to its default")
    wait_for(lambda: home.scalar("SELECT count(*) FROM card_work") == 0
             and home.scalar("SELECT count(*) FROM dispatch_ledger WHERE status = 'running'") == 0,
             300, "every halted card to be processed after the acknowledgement", every=fixed.record)
    assert home.scalar("SELECT count(DISTINCT card_id) FROM image_evidence") == CARDS
    assert home.scalar("SELECT count(*) FROM envelope_trip") == 1, "no new trip after the acknowledgement"
    assert home.scalar("SELECT count(*) FROM image_evidence") == CARDS, "each card read once"
    triggers = home.rows("SELECT DISTINCT trigger FROM dispatch_ledger WHERE status = 'completed'")
    assert triggers == [("card-event",)], "the stream, not the sweep, brought the cards back"
    assert fixed.ctrl_c() == 0
    assert fixed.left_behind() == []
    status = home.server.status()
    assert status.running and status.pid == postmaster, "the server that was running before is left alone"
