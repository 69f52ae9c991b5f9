"""The stream under one live daemon (`stage-e dev`, streaming on, the host-load bar raised so a busy shared host
cannot trip it): scans that arrive after it started, in a watched directory, in an S3 prefix and in an HTTP
manifest (each source registered with `stage-e sources add`), reach a machine verdict with no manual step; then a
trip recorded by another host stops the draining run before its next claim, and nothing is claimed until the
acknowledgement.

The claims share one `stage-e dev`: none of them disturbs another (the trip is recorded only once every verdict of
the first part is in), and each oracle reads only its own source's cards.

- Verdicts: per source, a content-verified card with evidence for its bytes and a vote or a review routing; the
  servers' records show each object fetched once (the listing never counted as a fetch); no fetch failed.
- The trip, recorded straight into `envelope_trip` as another host's run would record it while the draining run is
  going and idle: the draining run ends; a scan dropped after it becomes a card (the sensors still sync sources);
  the `card_stream` sensor then ticks twice with the card owed, each tick skipping with the trip's id, and no run
  starts and no claim is made (a broken gate in either sensor would start a draining run at one of those ticks:
  Dagster records a requested run when the tick submits it); after `stage-e trips ack` the card reaches a verdict.
- The command itself: started with the embedded server down, it starts it, without Dagster's two start warnings (a
  `dagster.yaml` in the working directory that is not the one in force; `dagster dev` superseded by `dg dev`); the
  asset checks show on their assets in the UI's GraphQL; the `source_inbox` sensor's sync shows as a `card_sources`
  materialization (the daemon, not the test, does it); Ctrl-C (SIGINT to the command's process group, as a terminal
  sends it) leaves no process behind and stops the embedded server it started. (tests/live/test_live_trip.py ends
  with the other case: a server running before `stage-e dev` started is left running.)
"""

from __future__ import annotations

import shutil
import time

import pytest

from testkit.corpus import demo_corpus_cli
from testkit.live import wait_for
from testkit.oracle import drain_runs
from testkit.remote import http_server, s3_server

pytestmark = pytest.mark.slow

_TICKS = ('{ sensorOrError(sensorSelector: {repositoryName: "__repository__", repositoryLocationName: '
          '"stage_e_dagster.definitions", sensorName: "card_stream"}) { ... on Sensor { sensorState { '
          'ticks(limit: 20) { timestamp status skipReason } } } } }')
_CHECKS = "{ assetNodes { assetKey { path } assetChecksOrError { ... on AssetChecks { checks { name } } } } }"
_SOURCES = ('{ assetNodes(assetKeys: [{path: ["card_sources"]}]) { assetMaterializations(limit: 1) { timestamp '
            'description } } }')
_VERDICT = ("EXISTS (SELECT 1 FROM image_evidence e WHERE e.card_id = c.id AND e.content_sha256 = c.content_sha256) "
            "AND (EXISTS (SELECT 1 FROM card_printing_tag t WHERE t.card_id = c.id) OR EXISTS "
            "(SELECT 1 FROM card_scan_log l WHERE l.card_id = c.id AND l.skip_reason = 'to-review'))")
_DONE = f"SELECT count(*) FROM card c WHERE c.identifier = %s AND {_VERDICT}"
_SOURCE_DONE = ("SELECT count(*) FROM card c JOIN source s ON s.id = c.source_id WHERE s.key = %s "
                f"AND c.content_verified AND {_VERDICT}")


def _working(drains: list[dict]) -> list[dict] | None:
    """The draining runs once exactly one is under way and every other one succeeded (a surplus run ends at once)."""
    started = [d for d in drains if d["status"] == "STARTED"]
    others = [d for d in drains if d["status"] != "STARTED"]
    return drains if len(started) == 1 and all(d["status"] == "SUCCESS" for d in others) else None


def _ended_ticks_after(dev, moment: float, count: int) -> list[dict] | None:
    """The `card_stream` ticks that started after `moment` and have ended, once there are at least `count`."""
    ticks = dev.query(_TICKS)["sensorOrError"]["sensorState"]["ticks"]
    ended = [t for t in ticks if t["timestamp"] > moment and t["status"] != "STARTED"]
    return ended if len(ended) >= count else None


def test_scans_from_a_directory_a_bucket_and_a_manifest_reach_verdicts_and_an_open_trip_stops_the_stream(home, dev):
    data = demo_corpus_cli(home, 4, printings=120, source=None)
    dropped, in_bucket, listed, later = sorted(path for path in (data / "scans").rglob("*") if path.is_file())[:4]
    inbox = home.root / "inbox"
    inbox.mkdir()
    with s3_server() as bucket, http_server() as web:
        home.env.pop("STAGE_E_INBOX_INTERVAL_SECONDS")
        home.env.update({"STAGE_E_STREAMING": "on", "STAGE_E_SWEEP_CRON": "0 0 1 1 *",
                         "STAGE_E_HOST_LOAD_CEILING": "1000",  # a busy shared host must not trip this test
                         "STAGE_E_STREAM_INTERVAL_SECONDS": "5", "STAGE_E_REMOTE_LIST_INTERVAL_SECONDS": "2",
                         **bucket.credentials_env("LIVE")})
        home.stage_e("sources", "add", str(inbox), "--key", "inbox")
        home.stage_e("sources", "add", f"s3://{bucket.bucket}/inbox", "--key", "bucket", "--endpoint",
                     bucket.endpoint, "--credentials", "LIVE")
        home.stage_e("sources", "add", web.manifest_url, "--key", "manifest")
        listed_sources = home.stage_e("sources", "list").stdout
        assert "credentials LIVE" in listed_sources and bucket.SECRET_KEY not in listed_sources
        home.server.stop()  # the commands above started the embedded server; `stage-e dev` must start it again
        assert not home.server.status().running

        running = dev()
        running.wait_ready()
        assert home.server.status().running, "stage-e dev started the embedded server"
        nodes = running.query(_CHECKS)["assetNodes"]
        checks = {(n["assetKey"]["path"][-1], c["name"]) for n in nodes for c in n["assetChecksOrError"]["checks"]}
        assert len(checks) == 5 and ("printing_votes", "no_duplicate_votes") in checks
        shutil.copy(dropped, inbox / dropped.name)
        bucket.put(f"inbox/{in_bucket.name}", in_bucket.read_bytes())
        web.images = {listed.name: listed.read_bytes()}
        wait_for(lambda: home.scalar(_DONE, (dropped.name,)), 180, "the dropped scan's verdict",
                 every=running.record, poll=0.5)
        (synced,) = wait_for(lambda: running.query(_SOURCES)["assetNodes"][0]["assetMaterializations"], 60,
                             "a sensor's sync to show as a card_sources materialization", every=running.record)
        assert "source_inbox" in synced["description"], synced
        for key in ("bucket", "manifest"):
            wait_for(lambda key=key: home.scalar(_SOURCE_DONE, (key,)), 240, f"the verdict on the {key} source's scan",
                     every=running.record, poll=0.5)
        assert bucket.record.completed == {f"inbox/{in_bucket.name}": 1}, "the object was fetched once"
        assert web.record.completed == {listed.name: 1}, "the image was fetched once"
        assert home.scalar("SELECT count(*) FROM card WHERE fetch_failed IS NOT NULL") == 0

        # Both sensors may ask for a draining run in the same tick: the surplus one ends at its start.
        drains = wait_for(lambda: _working(drain_runs(running)), 60, "one draining run working, any surplus one ended",
                          every=running.record)
        (drain,) = [d for d in drains if d["status"] == "STARTED"]
        # The verdicts are written by Stage D; Stage E closes the claims' rows a moment later.
        wait_for(lambda: home.scalar("SELECT count(*) FROM dispatch_ledger WHERE status = 'running'") == 0, 60,
                 "the claims' rows to close", every=running.record, poll=0.5)
        claims = home.rows("SELECT DISTINCT trigger, status FROM dispatch_ledger")
        assert claims == [("card-event", "completed")], claims
        made = home.scalar("SELECT count(*) FROM dispatch_ledger")

        asked = len(drains)
        trip = "envtrip-20260101T000000-0000test"
        home.execute("INSERT INTO envelope_trip (id, bar, observed, ceiling, run_id, detail) VALUES "
                     "(%s, 'host_load', 9, 4, 'another-host-run', '{}')", (trip,))
        wait_for(lambda: all(d["status"] == "SUCCESS" for d in drain_runs(running)), 60,
                 "the draining run to stop at the trip", every=running.record, poll=0.5)
        shutil.copy(later, inbox / later.name)
        wait_for(lambda: home.scalar("SELECT count(*) FROM card WHERE identifier = %s", (later.name,)), 60,
                 "the later scan to become a card (the sensor still syncs)", every=running.record, poll=0.5)
        wait_for(lambda: home.scalar("SELECT count(*) FROM card_work WHERE stage = 'C'") == 1, 10, "it is owed",
                 poll=0.2)
        owed = time.time()
        ticks = wait_for(lambda: _ended_ticks_after(running, owed, 2), 120, "two card_stream ticks with the card owed",
                         every=running.record)
        assert all(t["status"] == "SKIPPED" and trip in (t["skipReason"] or "") for t in ticks), ticks
        assert len(drain_runs(running)) == asked, "no draining run starts while the trip is open"
        assert home.scalar("SELECT count(*) FROM dispatch_ledger") == made, "no claim while the trip is open"
        assert home.scalar("SELECT count(*) FROM image_evidence e JOIN card c ON c.id = e.card_id "
                           "WHERE c.identifier = %s", (later.name,)) == 0

        home.stage_e("trips", "ack", trip, "--note", "the other host's load is gone")
        wait_for(lambda: home.scalar(_DONE, (later.name,)), 120, "the verdict after the ack",
                 every=running.record, poll=0.5)
        assert len(drain_runs(running)) > asked and home.scalar("SELECT count(*) FROM dispatch_ledger") == made + 1
        output = running.output()
        assert "will not be used" not in output and "SupersessionWarning" not in output, output[:2000]
        assert running.ctrl_c() == 0
        assert running.left_behind() == []
        assert not home.server.status().running, "the embedded server this command started is stopped"
