"""`stage-e dev` live: a real `dg dev` (webserver, daemon, code server) on an embedded Postgres of its own.

- Started with the embedded server down, it starts it; files dropped into a registered source directory become
  cards through the `source_inbox` sensor, which syncs them in its tick and reports a `card_sources`
  materialization (the daemon, not the test, does it); the asset
  checks show on their assets in the UI's GraphQL; and Ctrl-C (SIGINT to the command's process group, as a terminal
  sends it) leaves no process behind and stops the embedded server. It starts without Dagster's two start warnings
  (a `dagster.yaml` in the working directory that is not the one in force; `dagster dev` superseded by `dg dev`).
- Started with the server already up, Ctrl-C leaves the server running.
"""

from __future__ import annotations

import pytest

from testkit.corpus import small_scan
from testkit.live import wait_for

pytestmark = pytest.mark.slow

_CHECKS = "{ assetNodes { assetKey { path } assetChecksOrError { ... on AssetChecks { checks { name } } } } }"
_SOURCES = '{ assetNodes(assetKeys: [{path: ["card_sources"]}]) { assetMaterializations(limit: 1) { timestamp } } }'


def test_ctrl_c_stops_dagster_and_the_embedded_postgres_it_started(home, dev):
    inbox = home.root / "inbox"
    inbox.mkdir()
    home.stage_e("sources", "add", str(inbox), "--key", "inbox")  # starts the embedded server...
    home.server.stop()  # ...which is down again when `stage-e dev` starts
    assert not home.server.status().running

    running = dev()
    running.wait_ready()
    assert home.server.status().running, "stage-e dev started the embedded server"
    nodes = running.graphql(_CHECKS)["assetNodes"]
    checks = {(n["assetKey"]["path"][-1], c["name"]) for n in nodes for c in n["assetChecksOrError"]["checks"]}
    assert len(checks) == 5 and ("printing_votes", "no_duplicate_votes") in checks

    for index in range(3):  # files arrive while Dagster runs: the daemon's sensor takes them in
        partial = small_scan(home.root / f"card {index}.png", shade=60 * index)
        partial.replace(inbox / partial.name)
    wait_for(lambda: home.scalar("SELECT count(*) FROM card") == 3, 120, "the inbox files to become cards",
             every=running.record)
    wait_for(lambda: running.graphql(_SOURCES)["assetNodes"][0]["assetMaterializations"], 60,
             "the sensor's sync to show as a card_sources materialization", every=running.record)

    output = running.output()
    assert "will not be used" not in output and "SupersessionWarning" not in output, output[:2000]
    assert running.ctrl_c() == 0
    assert running.left_behind() == []
    assert not home.server.status().running, "the embedded server this command started is stopped"


def test_ctrl_c_leaves_a_server_that_was_running_before(home, dev):
    home.server.start(databases=("stage_e", "dagster"))
    postmaster = home.server.status().pid
    running = dev()
    running.wait_ready()
    assert running.ctrl_c() == 0
    assert running.left_behind() == []
    status = home.server.status()
    assert status.running and status.pid == postmaster, "the server that was running before is left alone"
