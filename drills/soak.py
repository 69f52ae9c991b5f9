"""Soak drill: generated cards arrive in waves in a watched source directory under a live `stage-e dev` (the
`source_inbox` sensor ingests them, the `card_stream` sensor batches them) with a low OCR cap, an envelope trip is
forced midway, and the operator fixes the cause, restarts and acknowledges it.

1. First half: the scans are copied into the inbox wave by wave; each wave is ingested and processed before the
   next arrives. At each of these quiet points the drill samples `stage-e dev`'s process tree (process count,
   resident memory) and the Postgres server's connections, to see whether any of them grows with the work done.
   A quiet point also waits for the draining run to end (it ends 5 s after the stream went idle here, instead of
   the default 300 s), so the tree holds Dagster's own processes only, not a draining run's, whose OCR workers are
   kept or let go by their idle grace.
2. Second half: `stage-e dev` is restarted with every passive run over the memory bar (`STAGE_E_RSS_CEILING_MB=1`).
   The first wave of the second half trips the envelope; the rest arrive while the trip is open: they are ingested
   (syncing is not gated) but no batch does any work behind the trip.
3. Restart with the default memory bar: nothing starts while the trip is open; after `stage-e trips ack` the stream
   (the sweep is scheduled far away) processes every card owed work.

The oracle is the database and Dagster's run records, never the drill's own bookkeeping: every card evidenced (or
a named skip) and voted or routed to review; each card in exactly one `completed` batch, its evidence and machine
votes written by that batch, no duplicate evidence or vote; every micro_batch run has its ledger row, `completed`
exactly when it succeeded with work, nothing left `running`; one trip per tripped run; no process of any
`stage-e dev` left behind; and the OCR workers' peak memory, the dev tree's memory and processes and the Postgres
connections stay flat from the first wave to the last.

The envelope is not under test here (tests/live/test_live_trip.py is): the host-load bar is raised to
`host_load_ceiling` (100 by default) so a host busy with other work cannot trip it; `None` keeps the project's
default bar.
"""

from __future__ import annotations

import datetime as dt
import time
from typing import Any

from sqlalchemy import NullPool, create_engine

from drills import verdict
from drills.soak_memory import GROWTH_LIMIT, WorkerMemory, check_flat, quiet_sample
from stage_e_dagster.db.review.queue import review_queue
from stage_e_dagster.demo.feed import copy_into, pending
from testkit import live
from testkit.corpus import demo_corpus_cli
from testkit.live import Dev, Home, wait_for
from testkit.oracle import ENDED, assert_nothing_twice, drain_runs, micro_batch_runs
from testkit.sql import rows, scalar

_RUNS = '{ runsOrError(filter: {pipelineName: "micro_batch"}) { ... on Runs { results { runId status } } } }'
_SENSOR_TICKS = ('{ repositoriesOrError { ... on RepositoryConnection { nodes { sensors { name sensorState { '
                 'ticks(afterTimestamp: %f, statuses: [SKIPPED]) { skipReason } } } } } } }')


def _settled(home: Home, dev: Dev, cards: int) -> bool:
    """`cards` cards ingested, none owed work, no batch running, no micro_batch or draining run waiting or under
    way."""
    if scalar(home, "SELECT count(*) FROM card") != cards or scalar(home, "SELECT count(*) FROM card_work") != 0:
        return False
    return (all(r["status"] in ENDED for r in micro_batch_runs(dev) + drain_runs(dev))
            and scalar(home, "SELECT count(*) FROM dispatch_ledger WHERE status = 'running'") == 0)


def _chunks(items: list[str], parts: int) -> list[list[str]]:
    size = -(-len(items) // max(1, parts))
    return [items[i:i + size] for i in range(0, len(items), size)]


def run(figures: dict[str, Any] | None = None, *, cards: int = 2000, batch: int = 100, waves: int = 4,
        wave_timeout: float = 1800, host_load_ceiling: str | None = "100", forced_trip: bool = True
        ) -> dict[str, Any]:
    """The drill on a throwaway home; returns the figures (raises AssertionError on a broken rule). With
    `forced_trip` False every card arrives in the first half's waves and the run ends there (no trip, one `stage-e
    dev` start: the size the test suite affords; the live trip test proves the trip). `host_load_ceiling`
    "default" (or None) keeps the project's bar."""
    figures = {} if figures is None else figures
    host_load_ceiling = None if host_load_ceiling == "default" else host_load_ceiling
    with live.home() as home:
        _run(home, figures, cards, batch, waves, wave_timeout, host_load_ceiling, forced_trip)
    return figures


def _run(home: Home, figures: dict[str, Any], cards: int, batch: int, waves: int, wave_timeout: float,
         host_load_ceiling: str | None, forced_trip: bool) -> None:
    began = time.monotonic()
    devs: list[Dev] = []
    memory = None
    try:
        data = demo_corpus_cli(home, cards, printings=max(150, cards), degraded=None, workers=None, source=None)
        inbox = home.root / "inbox"
        inbox.mkdir()
        home.stage_e("sources", "add", str(inbox), "--key", "soak")
        scans = pending(data / "scans", inbox)
        assert len(scans) == cards, f"{len(scans)} scans generated, expected {cards}"
        half = cards // 2 if forced_trip else cards
        first_half, second_half = scans[:half], scans[half:]
        home.env.update({"STAGE_E_STREAMING": "on", "STAGE_E_BATCH_SIZE": str(batch), "STAGE_E_OCR_MAX_SLOTS": "1",
                         "STAGE_E_STREAM_INTERVAL_SECONDS": "5", "STAGE_E_INBOX_INTERVAL_SECONDS": "5",
                         "STAGE_E_SWEEP_CRON": "0 0 1 1 *", "STAGE_E_DRAIN_IDLE_SECONDS": "5"})
        if host_load_ceiling is not None:
            home.env["STAGE_E_HOST_LOAD_CEILING"] = host_load_ceiling
        figures.update(cards=cards, batch=batch, setup_s=round(time.monotonic() - began))
        memory = WorkerMemory()
        started = time.monotonic()

        devs.append(Dev(home))
        memory.dev = devs[-1]
        devs[-1].wait_ready()
        delivered, samples = 0, []
        for wave in _chunks(first_half, waves):
            delivered += copy_into(data / "scans", inbox, wave)
            wait_for(lambda n=delivered: _settled(home, devs[-1], n), wave_timeout,
                     f"the wave ending at card {delivered} to be processed", every=devs[-1].record)
            samples.append(quiet_sample(home, devs[-1], samples[0] if samples else None))
        figures["first_half_s"] = round(time.monotonic() - started)
        if not forced_trip:
            runs = {r["runId"]: r["status"] for r in devs[-1].graphql(_RUNS)["runsOrError"]["results"]}
            _stop(devs[-1])
            check_flat(samples, figures)
            figures["total_s"] = round(time.monotonic() - started)
            figures.update(memory.stop())
            memory = None
            _check_end(home, cards, runs, figures)
            return
        _stop(devs[-1])
        check_flat(samples, figures)
        before_trip = {run for (run,) in rows(home, "SELECT run_id FROM dispatch_ledger")}
        written = _written(home)

        home.env["STAGE_E_RSS_CEILING_MB"] = "1"
        devs.append(Dev(home))
        memory.dev = devs[-1]
        devs[-1].wait_ready()
        second_waves = _chunks(second_half, waves)
        delivered += copy_into(data / "scans", inbox, second_waves[0])
        wait_for(lambda: scalar(home, "SELECT count(*) FROM envelope_trip") > 0, wave_timeout, "the forced trip",
                 every=devs[-1].record)
        for wave in second_waves[1:]:
            delivered += copy_into(data / "scans", inbox, wave)
        wait_for(lambda: scalar(home, "SELECT count(*) FROM card") == cards, wave_timeout,
                 "the cards that arrived behind the trip to be ingested", every=devs[-1].record)
        _wait_halted_tick(devs[-1], time.time(), wave_timeout)  # the stream has seen them, and requested nothing
        wait_for(lambda: _runs_ended(home, devs[-1]), wave_timeout, "the runs behind the trip to end",
                 every=devs[-1].record)
        _stop(devs[-1])
        _check_trip(home, before_trip, written, figures)

        del home.env["STAGE_E_RSS_CEILING_MB"]
        devs.append(Dev(home))
        memory.dev = devs[-1]
        devs[-1].wait_ready()
        ledger_rows = scalar(home, "SELECT count(*) FROM dispatch_ledger")
        _wait_halted_tick(devs[-1], time.time(), wave_timeout)
        assert scalar(home, "SELECT count(*) FROM dispatch_ledger") == ledger_rows, "a run started behind the trip"
        acked = time.monotonic()
        for (trip,) in rows(home, "SELECT id FROM envelope_trip WHERE acknowledged_at IS NULL"):
            home.stage_e("trips", "ack", trip, "--note", "memory ceiling back to its default")
        wait_for(lambda: _settled(home, devs[-1], cards), wave_timeout,
                 "every card after the acknowledgement", every=devs[-1].record)
        figures["after_ack_s"] = round(time.monotonic() - acked)
        figures["total_s"] = round(time.monotonic() - started)
        runs = {r["runId"]: r["status"] for r in devs[-1].graphql(_RUNS)["runsOrError"]["results"]}
        _stop(devs[-1])
        figures.update(memory.stop())
        memory = None
        _check_end(home, cards, runs, figures)
    finally:
        if memory is not None:
            memory.stop()
        for dev in devs:
            dev.kill_all()


def _stop(dev: Dev) -> None:
    """Ctrl-C, as an operator stops it: every process `stage-e dev` ever had (runs and OCR workers included) ends."""
    try:
        dev.ctrl_c()
        wait_for(lambda: not dev.left_behind(), 30, "every process of stage-e dev to end")
    except AssertionError as err:
        raise AssertionError(f"{err}; left behind: {dev.left_behind()}") from None
    finally:
        dev.kill_all()


def _wait_halted_tick(dev: Dev, since: float, timeout: float) -> None:
    """Wait for a `card_stream` tick after `since` (a UNIX time) that requested nothing because a trip is open."""
    def halted() -> bool:
        repos = ((dev.graphql(_SENSOR_TICKS % since) or {}).get("repositoriesOrError") or {}).get("nodes") or []
        return any("envelope trip" in (tick["skipReason"] or "") for repo in repos for sensor in repo["sensors"]
                   if sensor["name"] == "card_stream" for tick in sensor["sensorState"]["ticks"])
    wait_for(halted, timeout, "a card_stream tick halted by the open trip", every=dev.record)


def _runs_ended(home: Home, dev: Dev) -> bool:
    runs = (dev.graphql(_RUNS) or {}).get("runsOrError", {}).get("results")
    return (runs is not None and all(r["status"] in ("SUCCESS", "FAILURE", "CANCELED") for r in runs)
            and scalar(home, "SELECT count(*) FROM dispatch_ledger WHERE status = 'running'") == 0)




def _written(home: Home) -> tuple[int, int, int]:
    """Evidence rows, named skips and votes: what a batch writes."""
    return (scalar(home, "SELECT count(*) FROM image_evidence"), scalar(home, "SELECT count(*) FROM card_scan_log"),
            scalar(home, "SELECT count(*) FROM card_printing_tag"))


def _check_trip(home: Home, before: set[str], written: tuple[int, int, int], figures: dict[str, Any]) -> None:
    """Every second-half run that tripped was already running at the first trip and recorded one trip; every other
    one halted at its gate naming a trip; nothing was written behind the trip, and every new card is owed work."""
    trips = rows(home, "SELECT id, run_id, tripped_at FROM envelope_trip")
    ledger = {run: (status, reason, opened) for run, status, reason, opened in rows(
        home, "SELECT run_id, status, failure_reason, started_at FROM dispatch_ledger") if run not in before}
    first = min(t[2] for t in trips)
    tripped = {t[1] for t in trips}
    trip_ids = {t[0] for t in trips}
    assert len(trips) == len(tripped) and tripped <= set(ledger), "one trip per run, each a second-half batch"
    behind = set(ledger)
    for run in behind:
        status, reason, opened = ledger[run]
        if run in tripped:
            assert opened <= first + dt.timedelta(seconds=1), f"run {run} tripped although it started after a trip"
            assert status == "halted" and "envelope tripped" in reason, (run, status, reason)
        else:
            assert status == "halted" and "halted before any work" in reason, (run, status, reason)
            assert any(trip in reason for trip in trip_ids), reason
    assert _written(home) == written, f"written behind the trip: {written} -> {_written(home)} (evidence, skips, votes)"
    owed, new = scalar(home, "SELECT count(*) FROM card_work"), scalar(home, "SELECT count(*) FROM card") - len(
        {card for (ids,) in rows(home, "SELECT card_ids FROM dispatch_ledger WHERE status = 'completed'")
         for card in ids})
    assert owed == new, f"{owed} cards owed work behind the trip, {new} not processed"
    figures.update(trips=len(trips), halted_at_gate=len(behind - tripped))


def _check_end(home: Home, cards: int, runs: dict[str, str], figures: dict[str, Any]) -> None:
    """Every card evidenced or skipped by name and voted or routed to review, by exactly one completed batch; no
    duplicate rows; the ledger agrees with Dagster's run records."""
    all_cards = {card for (card,) in rows(home, "SELECT id FROM card")}
    assert len(all_cards) == cards, f"{len(all_cards)} cards ingested, expected {cards}"
    evidenced = {card for (card,) in rows(home, "SELECT card_id FROM image_evidence UNION "
                                                "SELECT card_id FROM card_scan_log")}
    assert all_cards <= evidenced, f"{len(all_cards - evidenced)} cards without evidence or a named skip"
    voted = {card for (card,) in rows(home, "SELECT DISTINCT card_id FROM card_printing_tag WHERE source = 'ocr'")}
    engine = create_engine(home.url, poolclass=NullPool)
    try:
        with engine.connect() as conn:
            routed = {item.card_id for item in review_queue(conn, limit=cards)}
    finally:
        engine.dispose()
    assert voted | routed >= all_cards, f"{len(all_cards - voted - routed)} cards neither voted nor in review"

    ledger = {run: (status, set(card_ids or [])) for run, status, card_ids in rows(
        home, "SELECT run_id, status, card_ids FROM dispatch_ledger")}
    assert set(runs) == set(ledger), (f"micro_batch runs without a ledger row: {set(runs) - set(ledger)}; ledger "
                                      f"rows without a run: {set(ledger) - set(runs)}")
    completed_by: dict[int, list[str]] = {}
    for run, (status, card_ids) in ledger.items():
        assert status != "running", f"batch {run} left running"
        if status == "completed" or runs[run] == "FAILURE":  # a failed run never claims to have completed
            assert (status, runs[run]) in (("completed", "SUCCESS"), ("failed", "FAILURE"), ("halted", "FAILURE")), (
                run, status, runs[run])
        if status == "completed":
            for card in card_ids:
                completed_by.setdefault(card, []).append(run)
    twice = {card: owners for card, owners in completed_by.items() if len(owners) > 1}
    assert not twice, f"{len(twice)} cards in more than one completed batch, e.g. {next(iter(twice.items()))}"
    assert set(completed_by) == all_cards, f"{len(all_cards - set(completed_by))} cards in no completed batch"

    written = rows(home, "SELECT card_id, run_id FROM image_evidence UNION ALL "
                         "SELECT card_id, run_id FROM card_printing_tag WHERE source = 'ocr'")
    stray = [(card, run) for card, run in written if run not in completed_by.get(card, [])]
    assert not stray, f"{len(stray)} evidence or vote rows not written by the card's completed batch: {stray[:3]}"
    assert_nothing_twice(home)  # one vote per (card, voter), one evidence row per card, no abstention twice
    growth = figures.get("worker_rss_growth")
    assert growth is not None, (f"OCR worker memory was not measured: {figures.get('workers_judged')} of "
                                f"{figures.get('workers_seen')} workers seen long enough to judge")
    assert growth <= GROWTH_LIMIT, f"OCR worker memory grew {growth}x from first to last batches"
    statuses = [status for status, _ in ledger.values()]
    figures.update(voted=len(voted), review=len(routed - voted), runs=len(runs),
                   completed=statuses.count("completed"), halted=statuses.count("halted"),
                   cards_per_s=round(cards / max(1, figures["first_half_s"] + figures.get("after_ack_s", 0)), 2))


def main(argv: list[str] | None = None) -> None:
    parser = verdict.parser_for("soak", __doc__)
    parser.add_argument("--cards", type=int, default=2000)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--waves", type=int, default=4, help="waves per half")
    parser.add_argument("--host-load-ceiling", default="100",
                        help="STAGE_E_HOST_LOAD_CEILING for the drill; 'default' keeps the project's bar")
    verdict.drill_main("soak", run, parser, argv)
