"""The stream under a live daemon (`stage-e dev`, streaming on, the project's defaults otherwise): a scan dropped
into a watched directory reaches a machine verdict with no manual step, and a draining run stops at an open trip
before its next claim.

The oracle is the database and Dagster's run records. The trip here is recorded straight into `envelope_trip`, as
another host's run would record it, while a draining run is going and idle; the scan dropped after it becomes a card
(the sensor still syncs sources) but is claimed by nobody until the acknowledgement.
"""

from __future__ import annotations

import shutil

import pytest

from testkit.corpus import demo_corpus_cli
from testkit.live import wait_for

pytestmark = pytest.mark.slow

_DRAINS = ('{ runsOrError(filter: {pipelineName: "stream_drain"}) { ... on Runs { results { runId status '
           'tags { key value } } } } }')
_DONE = ("SELECT count(*) FROM card c WHERE c.identifier = %s AND EXISTS (SELECT 1 FROM image_evidence e "
         "WHERE e.card_id = c.id) AND (EXISTS (SELECT 1 FROM card_printing_tag t WHERE t.card_id = c.id) OR EXISTS "
         "(SELECT 1 FROM card_scan_log l WHERE l.card_id = c.id AND l.skip_reason = 'to-review'))")


def _drains(dev) -> list[dict]:
    return dev.graphql(_DRAINS)["runsOrError"]["results"]


def test_a_dropped_scan_reaches_a_verdict_and_a_draining_run_stops_at_an_open_trip(home, dev):
    data = demo_corpus_cli(home, 3, printings=120, source=None)
    inbox = home.root / "inbox"
    inbox.mkdir()
    home.stage_e("sources", "add", str(inbox), "--key", "inbox")
    home.env.pop("STAGE_E_INBOX_INTERVAL_SECONDS")
    home.env.update({"STAGE_E_STREAMING": "on", "STAGE_E_SWEEP_CRON": "0 0 1 1 *",
                     "STAGE_E_HOST_LOAD_CEILING": "1000"})  # a busy shared host must not trip this test
    scans = sorted(path for path in (data / "scans").rglob("*") if path.is_file())

    running = dev()
    running.wait_ready()
    first = scans[0]
    shutil.copy(first, inbox / first.name)
    wait_for(lambda: home.scalar(_DONE, (first.name,)), 180, "the dropped scan's verdict",
             every=running.record, poll=0.5)
    (drain,) = _drains(running)
    assert drain["status"] == "STARTED", "the draining run is still going, idle, when the verdict is in"
    # The verdict is written by Stage D; Stage E closes the claim's row a moment later.
    wait_for(lambda: home.scalar("SELECT count(*) FROM dispatch_ledger WHERE status <> 'running'"), 60,
             "the claim's row to close", every=running.record, poll=0.5)
    (claim,) = home.rows("SELECT run_id, trigger, status FROM dispatch_ledger")
    assert claim[1:] == ("card-event", "completed")

    trip = "envtrip-20260101T000000-0000test"
    home.execute("INSERT INTO envelope_trip (id, bar, observed, ceiling, run_id, detail) VALUES "
                  "(%s, 'host_load', 9, 4, 'another-host-run', '{}')", (trip,))
    wait_for(lambda: _drains(running)[0]["status"] == "SUCCESS", 60, "the draining run to stop at the trip",
             every=running.record, poll=0.5)
    second = scans[1]
    shutil.copy(second, inbox / second.name)
    wait_for(lambda: home.scalar("SELECT count(*) FROM card WHERE identifier = %s", (second.name,)), 60,
             "the second scan to become a card (the sensor still syncs)", every=running.record)
    wait_for(lambda: home.scalar("SELECT count(*) FROM card_work WHERE stage = 'C'") == 1, 10, "it is owed")
    # Two card_stream intervals (10 s each by default) for a broken gate to show itself.
    with pytest.raises(AssertionError):
        wait_for(lambda: len(_drains(running)) > 1 or home.scalar("SELECT count(*) FROM dispatch_ledger") > 1,
                 25, "a draining run or a claim while the trip is open", every=running.record)
    assert home.scalar("SELECT count(*) FROM image_evidence") == 1

    home.stage_e("trips", "ack", trip, "--note", "the other host's load is gone")
    wait_for(lambda: home.scalar(_DONE, (second.name,)), 120, "the verdict after the ack",
             every=running.record, poll=0.5)
    assert len(_drains(running)) == 2 and home.scalar("SELECT count(*) FROM dispatch_ledger") == 2
    running.stop()
