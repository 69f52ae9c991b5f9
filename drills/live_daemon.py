"""Drill `live-daemon`: the pipeline as it runs in production, `stage-e dev` (webserver, daemon, code server) on the
embedded Postgres, driven and read only through the UI's GraphQL API and the database.

- The code location shows the three stage assets, the `micro_batch` job, the sensors running and the backstop
  sweep schedule running.
- Ingested cards are picked up by the daemon's `card_stream` sensor and end in completed runs: every run SUCCESS,
  every ledger row `completed`, each card in exactly one batch, every card evidenced and voted (or routed to
  review), nothing written twice.
- Run keys deduplicate: no two runs share a key; and when a finished batch's cards are offered again unchanged
  (their evidence deleted, so the sensor requests the very same batch), the daemon records the tick's run key and
  launches nothing for it.
- Ctrl-C to the process group stops everything: no process of the tree is left.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from drills import verdict
from stage_e_dagster.sensors.card_stream import KEY_EPOCH_SECONDS
from testkit import live
from testkit.corpus import demo_corpus_cli
from testkit.live import Dev, Home, wait_for
from testkit.oracle import REPOSITORY, assert_each_card_done_once, micro_batch_runs, stream_env, wait_settled
from testkit.sql import execute, rows, scalar

ASSETS = {"image_evidence", "printing_votes", "dispatch_outcome"}
SENSORS = {"card_stream", "record_run_failures", "source_inbox"}
SCHEDULE = "backstop_sweep"
_TICKS = ('{ repositoriesOrError { ... on RepositoryConnection { nodes { sensors { name sensorState { '
          'ticks(limit: 20) { timestamp status runKeys runIds } } } } } } }')


def check_definitions(dev: Dev) -> None:
    """The code location as the UI sees it: assets, job, sensors and schedule, and their states."""
    nodes = dev.query(REPOSITORY)["repositoriesOrError"]["nodes"]
    assert len(nodes) == 1, nodes
    repo = nodes[0]
    assets = {node["assetKey"]["path"][-1] for node in repo["assetNodes"]}
    assert ASSETS <= assets, assets
    assert "micro_batch" in {job["name"] for job in repo["jobs"]}
    sensors = {s["name"]: s["sensorState"]["status"] for s in repo["sensors"]}
    assert all(sensors.get(name) == "RUNNING" for name in SENSORS), sensors
    schedules = {s["name"]: s["scheduleState"]["status"] for s in repo["schedules"]}
    assert schedules.get(SCHEDULE) == "RUNNING", schedules


def stream_ticks(dev: Dev, after: float) -> list[dict[str, Any]]:
    """The card_stream sensor's ticks evaluated after `after` (epoch seconds)."""
    nodes = dev.query(_TICKS)["repositoriesOrError"]["nodes"]
    ticks = next(s["sensorState"]["ticks"] for s in nodes[0]["sensors"] if s["name"] == "card_stream")
    return [tick for tick in ticks if tick["timestamp"] > after]


def check_stream_runs(home: Home, dev: Dev, cards: int) -> dict[str, str]:
    """Every micro_batch run came from the card stream and completed; each card was in exactly one batch.
    Returns run key -> run id."""
    runs = micro_batch_runs(dev)
    assert runs, "the card stream started no run"
    assert all(r["status"] == "SUCCESS" for r in runs), [(r["runId"], r["status"]) for r in runs]
    assert all(r["tags"].get("dagster/sensor_name") == "card_stream" for r in runs)
    ledger = {run: (status, ids) for run, status, ids in rows(home, "SELECT run_id, status, card_ids FROM "
                                                               "dispatch_ledger")}
    assert set(ledger) == {r["runId"] for r in runs}, "one ledger row per run"
    assert {status for status, _ in ledger.values()} == {"completed"}, ledger
    batched = sorted(card for _, ids in ledger.values() for card in ids)
    assert batched == sorted(r[0] for r in rows(home, "SELECT id FROM card")), "each card in exactly one batch"
    assert_each_card_done_once(home, cards)
    keys = {r["tags"]["dagster/run_key"]: r["runId"] for r in runs}
    assert len(keys) == len(runs), "no two runs share a run key"
    return keys


def prove_dedup(home: Home, dev: Dev, figures: dict[str, Any], timeout: float) -> None:
    """Offer a finished batch's cards again, unchanged: the sensor requests the same run key and the daemon skips
    it. Run keys carry the hour, so when the hour turned since that batch ran, the new run it gets is finished
    first and offered again in turn."""
    for _ in range(2):
        runs = micro_batch_runs(dev)
        before = {r["runId"]: r["tags"]["dagster/run_key"] for r in runs}
        run_id, card_ids = rows(home, "SELECT run_id, card_ids FROM dispatch_ledger WHERE status = 'completed' "
                                      "ORDER BY finished_at DESC LIMIT 1")[0]
        key = before[run_id]
        reopened = time.time()
        assert execute(home, "DELETE FROM image_evidence WHERE card_id = ANY(%s)", (list(card_ids),)) == len(card_ids)
        assert scalar(home, "SELECT count(*) FROM card_work") == len(card_ids), "the batch's cards are owed work"

        def settled_tick(before=before, reopened=reopened, key=key) -> dict[str, Any] | None:
            new_runs = {r["runId"] for r in micro_batch_runs(dev)} - set(before)
            if new_runs:
                return {"new_runs": sorted(new_runs)}
            return next((tick for tick in stream_ticks(dev, reopened) if key in tick["runKeys"]), None)

        seen = wait_for(settled_tick, timeout, "the card stream to request the reopened batch again",
                        every=dev.record)
        if "new_runs" in seen:
            new_keys = {r["tags"]["dagster/run_key"] for r in micro_batch_runs(dev) if r["runId"] in seen["new_runs"]}
            assert not new_keys & set(before.values()), "a run key was launched twice"
            created = next(r["creationTime"] for r in runs if r["runId"] == run_id)
            assert int(created // KEY_EPOCH_SECONDS) != int(time.time() // KEY_EPOCH_SECONDS), \
                "a reopened batch got a new run key although its key's hour had not turned"
            figures["dedup_hour_turned"] = True
            wait_settled(home, dev, timeout)
            continue
        assert seen["runIds"] == [], f"the tick that requested {key} again launched {seen['runIds']}"
        time.sleep(6)  # one more sensor interval: still nothing launched for it
        assert {r["runId"] for r in micro_batch_runs(dev)} == set(before), "a reopened batch was launched again"
        figures["dedup_skipped_key"] = key[:32]
        return
    raise AssertionError("the reopened batch got a new run key twice in a row")


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
    keys = check_stream_runs(home, dev, cards)
    figures["runs"] = len(keys)
    prove_dedup(home, dev, figures, timeout=120)
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
