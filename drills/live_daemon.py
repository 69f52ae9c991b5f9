"""Drill `live-daemon`: the pipeline as it runs in production, `stage-e dev` (webserver, daemon, code server) on the
embedded Postgres, driven and read only through the UI's GraphQL API and the database.

- The code location shows the three stage assets, the `micro_batch` and `stream_drain` jobs, the sensors running
  and the backstop sweep schedule running.
- Ingested cards are picked up by a draining run the daemon's `card_stream` sensor starts; its claims end as
  completed `micro_batch` runs tagged with it: every run SUCCESS, every ledger row `completed`, each card in exactly
  one batch, every card evidenced and voted (or routed to review), nothing written twice.
- Nothing is taken twice: when a finished batch's cards are offered again (their evidence deleted) while the
  draining run is going, it claims them once more in one new batch, and no second draining run starts beside it.
- Ctrl-C to the process group stops everything: no process of the tree is left.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from drills import verdict
from testkit import live
from testkit.corpus import demo_corpus_cli
from testkit.live import Dev, Home, wait_for
from testkit.oracle import (
    REPOSITORY,
    assert_each_card_done_once,
    drain_runs,
    micro_batch_runs,
    stream_env,
    wait_settled,
)
from testkit.sql import execute, rows, scalar

ASSETS = {"image_evidence", "printing_votes", "dispatch_outcome"}
SENSORS = {"card_stream", "record_run_failures", "source_inbox"}
SCHEDULE = "backstop_sweep"
_TICKS = ('{ repositoriesOrError { ... on RepositoryConnection { nodes { sensors { name sensorState { '
          'ticks(afterTimestamp: %f, statuses: [SUCCESS, SKIPPED]) { timestamp } } } } } } }')


def check_definitions(dev: Dev) -> None:
    """The code location as the UI sees it: assets, job, sensors and schedule, and their states."""
    nodes = dev.query(REPOSITORY)["repositoriesOrError"]["nodes"]
    assert len(nodes) == 1, nodes
    repo = nodes[0]
    assets = {node["assetKey"]["path"][-1] for node in repo["assetNodes"]}
    assert ASSETS <= assets, assets
    assert {"micro_batch", "stream_drain"} <= {job["name"] for job in repo["jobs"]}
    sensors = {s["name"]: s["sensorState"]["status"] for s in repo["sensors"]}
    assert all(sensors.get(name) == "RUNNING" for name in SENSORS), sensors
    schedules = {s["name"]: s["scheduleState"]["status"] for s in repo["schedules"]}
    assert schedules.get(SCHEDULE) == "RUNNING", schedules


def card_stream_ticks(dev: Dev, since: float) -> int:
    """How many `card_stream` ticks the daemon has finished (requesting runs or skipping) after `since` (a UNIX
    time)."""
    repos = ((dev.graphql(_TICKS % since) or {}).get("repositoriesOrError") or {}).get("nodes") or []
    return sum(len(sensor["sensorState"]["ticks"]) for repo in repos for sensor in repo["sensors"]
               if sensor["name"] == "card_stream")


def check_stream_runs(home: Home, dev: Dev, cards: int) -> int:
    """Every micro_batch run is a claim of a draining run the stream started, and completed; each card was in
    exactly one batch. Returns how many claims there were."""
    runs = micro_batch_runs(dev)
    assert runs, "the draining run made no claim"
    assert all(r["status"] == "SUCCESS" for r in runs), [(r["runId"], r["status"]) for r in runs]
    claimed_by = {r["tags"].get("stage_e/drain_run") for r in runs}
    assert len(claimed_by) == 1, f"one draining run takes the stream's cards: {claimed_by}"
    drains = drain_runs(dev)  # besides it, only surplus ones (two sensors asked at once), ended at their start
    (drain,) = [d for d in drains if d["runId"] in claimed_by]
    assert drain["tags"].get("dagster/sensor_name") in ("card_stream", "source_inbox"), drain["tags"]
    surplus = [d for d in drains if d is not drain]
    assert all(d["status"] == "SUCCESS" for d in surplus), [(d["runId"], d["status"]) for d in surplus]
    ledger = {run: (status, ids) for run, status, ids in rows(home, "SELECT run_id, status, card_ids FROM "
                                                               "dispatch_ledger")}
    assert set(ledger) == {r["runId"] for r in runs}, "one ledger row per run"
    assert {status for status, _ in ledger.values()} == {"completed"}, ledger
    batched = sorted(card for _, ids in ledger.values() for card in ids)
    assert batched == sorted(r[0] for r in rows(home, "SELECT id FROM card")), "each card in exactly one batch"
    assert_each_card_done_once(home, cards)
    return len(runs)


def prove_no_double_claim(home: Home, dev: Dev, figures: dict[str, Any], timeout: float) -> None:
    """Offer a finished batch's cards again while the draining run is going (idle): it claims them in one new
    batch, and the sensors start no second draining run."""
    drains = drain_runs(dev)
    assert [d["status"] for d in drains].count("STARTED") == 1, "the draining run is still going, idle"
    before = {r["runId"] for r in micro_batch_runs(dev)}
    run_id, card_ids = rows(home, "SELECT run_id, card_ids FROM dispatch_ledger WHERE status = 'completed' "
                                  "ORDER BY finished_at DESC LIMIT 1")[0]
    assert execute(home, "DELETE FROM image_evidence WHERE card_id = ANY(%s)", (list(card_ids),)) == len(card_ids)
    assert scalar(home, "SELECT count(*) FROM card_work") == len(card_ids), "the batch's cards are owed work"
    wait_settled(home, dev, timeout)
    settled = time.time()  # two full card_stream ticks after this: room for a wrongly started second draining run
    wait_for(lambda: card_stream_ticks(dev, settled) >= 2, timeout, "two card_stream ticks after the reclaim",
             every=dev.record, poll=0.5)
    new = [r for r in micro_batch_runs(dev) if r["runId"] not in before]
    claims = rows(home, "SELECT card_ids FROM dispatch_ledger WHERE run_id = ANY(%s)", ([r["runId"] for r in new],))
    assert sorted(card for (ids,) in claims for card in ids) == sorted(card_ids), "each reopened card once"
    assert len(drain_runs(dev)) == len(drains), "no second draining run beside the going one"
    figures["reclaimed_in_claims"] = len(new)


def drill(home: Home, start_dev: Callable[[], Dev], figures: dict[str, Any], cards: int = 30, batch: int = 10,
          timeout: float = 600) -> None:
    """Run the drill on `home` (a fresh one); `start_dev` starts `stage-e dev` on it. Fills `figures`."""
    figures.update(cards=cards, batch=batch)
    demo_corpus_cli(home, cards)
    stream_env(home, batch, slots=2, STAGE_E_OCR_WAIT_SECONDS="300")
    started = time.monotonic()
    dev = start_dev()
    dev.wait_ready()
    figures["ready_s"] = round(time.monotonic() - started, 1)
    check_definitions(dev)
    wait_settled(home, dev, timeout)
    figures["settled_s"] = round(time.monotonic() - started, 1)
    figures["runs"] = check_stream_runs(home, dev, cards)
    prove_no_double_claim(home, dev, figures, timeout=120)
    assert dev.ctrl_c() == 0
    left = dev.left_behind()
    assert left == [], f"processes left behind: {left}"
    figures["processes_seen"] = len(dev.seen)
    figures["left_behind"] = len(left)


def run(figures: dict[str, Any] | None = None, *, cards: int = 30, batch: int = 10, timeout: float = 600
        ) -> dict[str, Any]:
    """The drill on a throwaway home; returns the figures (raises AssertionError on a broken rule)."""
    figures = {} if figures is None else figures
    with live.home() as home:
        devs = live.Devs(home)
        try:
            drill(home, devs, figures, cards=cards, batch=batch, timeout=timeout)
        finally:
            devs.kill_all()
    return figures


def main(argv: list[str] | None = None) -> None:
    parser = verdict.parser_for("live-daemon", __doc__)
    parser.add_argument("--cards", type=int, default=120)
    parser.add_argument("--batch", type=int, default=20)
    parser.add_argument("--timeout", type=float, default=1800)
    verdict.drill_main("live-daemon", run, parser, argv)
