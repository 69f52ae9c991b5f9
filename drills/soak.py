"""Soak drill: generated cards streamed by the `card_stream` sensor of a live `stage-e dev` in two waves, with an
envelope trip forced on the second wave, then acknowledged.

1. Wave one (half the cards) streams with the project's defaults and a low OCR cap until every card is done.
2. Wave two arrives while every passive run is forced over the memory bar (`STAGE_E_RSS_CEILING_MB=1`), with
   batches queued behind the micro_batch concurrency limit. Each run already running records one trip; every
   run that starts later halts at its gate, records no trip and does no work.
3. The operator restarts with the default ceiling: nothing starts while the trip is open; after `stage-e trips ack`
   the stream (the sweep is scheduled far away) processes every halted card.

The oracle is the database and Dagster's run records: every card evidenced (or a named skip) and voted or routed to
review, no `running` ledger row, one trip per tripped run, no evidence written behind an open trip; and the OCR
workers' resident memory, sampled all along, does not grow from the first batches to the last.
"""

from __future__ import annotations

import argparse
import datetime as dt
import shutil
import statistics
import threading
import time
from typing import Any

import psutil
import psycopg2
from sqlalchemy import NullPool, create_engine

from drills import verdict
from drills.live import Dev, Home, wait_for
from stage_e_dagster.db.review import review_queue
from stage_e_dagster.db.urls import libpq_dsn

_RUNS = ('{ runsOrError(filter: {pipelineName: "micro_batch"}) { ... on Runs { results { runId status } } } }')
MB = 1024 * 1024


def rows(home: Home, sql: str) -> list[tuple]:
    conn = psycopg2.connect(libpq_dsn(home.url), connect_timeout=5)
    try:
        with conn.cursor() as cur:
            cur.execute(sql)
            return cur.fetchall()
    finally:
        conn.close()


class WorkerMemory:
    """Samples the resident memory of every OCR worker (a child of a multiprocessing forkserver) every second."""

    def __init__(self) -> None:
        self.peaks: dict[int, tuple[float, float]] = {}  # pid -> (first seen, peak MB)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(1.0):
            for proc in psutil.process_iter(["pid", "ppid", "cmdline"]):
                try:
                    if "forkserver" not in " ".join(psutil.Process(proc.info["ppid"]).cmdline()):
                        continue
                    rss = proc.memory_info().rss / MB
                except (psutil.Error, OSError):
                    continue
                first, peak = self.peaks.get(proc.info["pid"], (time.monotonic(), 0.0))
                self.peaks[proc.info["pid"]] = (first, max(peak, rss))

    def stop(self) -> dict[str, Any]:
        self._stop.set()
        self._thread.join(timeout=5)
        ordered = [peak for _, peak in sorted(self.peaks.values())]
        if len(ordered) < 2:
            return {"workers_seen": len(ordered)}
        tenth = max(1, len(ordered) // 10)
        early, late = statistics.median(ordered[:tenth]), statistics.median(ordered[-tenth:])
        return {"workers_seen": len(ordered), "worker_rss_early_mb": round(early), "worker_rss_late_mb": round(late),
                "worker_rss_max_mb": round(max(ordered)), "worker_rss_growth": round(late / early, 2)}


def _settled(home: Home, dev: Dev) -> bool:
    """No card owed work, no batch running, no micro_batch run waiting or under way."""
    runs = (dev.graphql(_RUNS) or {}).get("runsOrError", {}).get("results")
    return (runs is not None and all(r["status"] in ("SUCCESS", "FAILURE", "CANCELED") for r in runs)
            and home.scalar("SELECT count(*) FROM dispatch_ledger WHERE status = 'running'") == 0)


def run(figures: dict[str, Any], cards: int = 2000, batch: int = 100, wave_timeout: float = 1800) -> None:
    home = Home()
    devs: list[Dev] = []
    memory = None
    try:
        data = home.root / "demo"
        home.stage_e("demo", "generate", "--printings", str(max(150, cards)), "--cards", str(cards), "--out",
                     str(data), timeout=max(180, cards))
        home.stage_e("catalog", "import", str(data / "catalog.json"), "--symbols", str(data / "symbols"))
        second = data / "wave2"
        second.mkdir()
        for path in sorted((data / "scans").iterdir())[cards // 2:]:
            shutil.move(path, second / path.name)
        home.env.update({"STAGE_E_STREAMING": "on", "STAGE_E_BATCH_SIZE": str(batch), "STAGE_E_OCR_MAX_SLOTS": "1",
                         "STAGE_E_STREAM_INTERVAL_SECONDS": "5", "STAGE_E_SWEEP_CRON": "0 0 1 1 *"})
        memory = WorkerMemory()
        started = time.monotonic()

        # Wave one, defaults.
        home.stage_e("ingest", str(data / "scans"), "--source", "wave1")
        devs.append(Dev(home))
        devs[-1].wait_ready()
        wait_for(lambda: home.scalar("SELECT count(*) FROM card_work") == 0 and _settled(home, devs[-1]),
                 wave_timeout, "wave one to be processed", every=devs[-1].record)
        figures["wave1_s"] = round(time.monotonic() - started)
        wave1_runs = {r["runId"] for r in devs[-1].graphql(_RUNS)["runsOrError"]["results"]}
        devs[-1].stop()

        # Wave two behind a forced trip.
        home.stage_e("ingest", str(second), "--source", "wave2")
        home.env["STAGE_E_RSS_CEILING_MB"] = "1"
        devs.append(Dev(home))
        devs[-1].wait_ready()
        wait_for(lambda: home.scalar("SELECT count(*) FROM envelope_trip") > 0, 300, "the forced trip",
                 every=devs[-1].record)
        time.sleep(15)  # the queued runs start behind the trip (the sensor asks for nothing more)
        wait_for(lambda: _settled(home, devs[-1]), 300, "the queued runs to end", every=devs[-1].record)
        runs = {r["runId"]: r["status"] for r in devs[-1].graphql(_RUNS)["runsOrError"]["results"]
                if r["runId"] not in wave1_runs}
        devs[-1].stop()
        _check_trip(home, runs, figures)
        wave2_cards = cards - cards // 2
        owed = home.scalar("SELECT count(*) FROM card_work")
        assert owed == wave2_cards, f"{owed} cards owed work behind the trip, expected wave two's {wave2_cards}"

        # The fix, a restart, and the acknowledgement.
        del home.env["STAGE_E_RSS_CEILING_MB"]
        devs.append(Dev(home))
        devs[-1].wait_ready()
        ledger_rows = home.scalar("SELECT count(*) FROM dispatch_ledger")
        time.sleep(12)  # two stream ticks
        assert home.scalar("SELECT count(*) FROM dispatch_ledger") == ledger_rows, "a run started behind the trip"
        acked = time.monotonic()
        for (trip,) in rows(home, "SELECT id FROM envelope_trip WHERE acknowledged_at IS NULL"):
            home.stage_e("trips", "ack", trip, "--note", "memory ceiling back to its default")
        wait_for(lambda: home.scalar("SELECT count(*) FROM card_work") == 0 and _settled(home, devs[-1]),
                 wave_timeout, "every halted card after the acknowledgement", every=devs[-1].record)
        figures["after_ack_s"] = round(time.monotonic() - acked)
        figures["total_s"] = round(time.monotonic() - started)
        devs[-1].stop()
        figures.update(memory.stop())
        memory = None
        _check_end(home, cards, figures)
    finally:
        if memory is not None:
            memory.stop()
        for dev in devs:
            dev.kill_all()
        home.server.destroy()
        shutil.rmtree(home.root, ignore_errors=True)


def _check_trip(home: Home, runs: dict[str, str], figures: dict[str, Any]) -> None:
    """Every wave-two run either tripped (once, and it was already running when the first trip happened) or halted
    at its gate naming a trip, with no trip of its own; no evidence was written behind the trip."""
    trips = rows(home, "SELECT id, run_id, tripped_at FROM envelope_trip")
    ledger = {run: (status, reason, opened) for run, status, reason, opened in rows(
        home, "SELECT run_id, status, failure_reason, started_at FROM dispatch_ledger")}
    first = min(t[2] for t in trips)
    tripped = {t[1] for t in trips}
    assert len(trips) == len(tripped) and tripped <= set(runs), "one trip per run, and only wave two's runs trip"
    trip_ids = {t[0] for t in trips}
    for run, status in runs.items():
        row_status, reason, opened = ledger[run]
        if run in tripped:
            assert opened <= first + dt.timedelta(seconds=1), f"run {run} tripped although it started after a trip"
            assert status == "FAILURE" and row_status == "halted" and "envelope tripped" in reason, (run, reason)
        else:
            assert status == "SUCCESS" and row_status == "halted" and "halted before any work" in reason, reason
            assert any(trip in reason for trip in trip_ids), reason
    halted = len(runs) - len(tripped)
    assert halted >= 1, "no run was queued behind the trip: the drill proved nothing about the gate"
    written = home.scalar("SELECT count(*) FROM image_evidence e JOIN card c ON c.id = e.card_id "
                          "JOIN source s ON s.id = c.source_id WHERE s.key = 'wave2'")
    assert written == 0, f"{written} evidence rows written behind an open trip"
    figures.update(wave2_runs=len(runs), trips=len(trips), halted_at_gate=halted)


def _check_end(home: Home, cards: int, figures: dict[str, Any]) -> None:
    """Every card evidenced or skipped by name, and voted or routed to review; nothing left running."""
    assert home.scalar("SELECT count(*) FROM card") == cards
    evidenced = home.scalar("SELECT count(*) FROM card c WHERE EXISTS (SELECT 1 FROM image_evidence e "
                            "WHERE e.card_id = c.id) OR EXISTS (SELECT 1 FROM card_scan_log l WHERE l.card_id = c.id)")
    assert evidenced == cards, f"{cards - evidenced} cards without evidence or a named skip"
    voted = {card for (card,) in rows(home, "SELECT DISTINCT card_id FROM card_printing_tag WHERE source = 'ocr'")}
    engine = create_engine(home.url, poolclass=NullPool)
    try:
        with engine.connect() as conn:
            routed = {item.card_id for item in review_queue(conn, limit=cards)}
    finally:
        engine.dispose()
    all_cards = {card for (card,) in rows(home, "SELECT id FROM card")}
    assert voted | routed == all_cards, f"{len(all_cards - voted - routed)} cards neither voted nor in review"
    assert home.scalar("SELECT count(*) FROM dispatch_ledger WHERE status = 'running'") == 0
    growth = figures.get("worker_rss_growth")
    assert growth is None or growth <= 1.5, f"OCR worker memory grew {growth}x from the first batches to the last"
    figures.update(cards=cards, voted=len(voted), review=len(routed - voted),
                   cards_per_s=round(cards / max(1, figures["wave1_s"] + figures["after_ack_s"]), 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=2000)
    parser.add_argument("--batch", type=int, default=100)
    args = parser.parse_args()
    verdict.main("soak", lambda figures: run(figures, cards=args.cards, batch=args.batch))


if __name__ == "__main__":
    main()
