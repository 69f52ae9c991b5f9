"""Drill `remote`: a stream of cards from an S3-compatible server under a 429 storm, then a lockout, then its
acknowledgement, under `stage-e dev`.

moto's server (`testkit.stores.S3Server`) holds the scans; the source is registered with `stage-e sources add
s3://...`; the `source_inbox` sensor lists it and draining runs fetch the cards through the fleet-wide limiter at
`STAGE_E_FETCH_RATE`. Once a third of the cards are fetched the server answers the next `storm` object requests
with 429 (a count, not a time: a batch's OCR phase sends no request); once two thirds are, it answers 403 to
everything (a lockout) until the drill sees the trip open, checks that the stream stopped fetching, lifts the
block and acknowledges the trip with `stage-e trips ack`. Then:

- every card is done exactly once (current evidence, and a vote or a review routing; nothing written twice) and no
  card was failed by the storm or the lockout (no fetch skip);
- the server, which timestamps every object request on arrival, never counted more than `rate` of them in one
  second (whole seconds of its clock, as a store's rate limit counts); the most in any sliding one-second window is
  reported beside it (`max_1s_sliding`), and how long the server's own process went without being scheduled
  (`server_stall_max_s`: the server runs in the drill's process, so a starved drill delays arrivals and bunches
  them);
- the storm halved the shared pace at least once, and the lockout opened exactly one trip, naming the source.

The oracle is the server's record and the database's final state, not the pipeline's own report.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from drills import verdict
from testkit import live
from testkit.corpus import demo_corpus_cli
from testkit.live import Dev, Home, wait_for
from testkit.oracle import assert_each_card_done_once, stream_env, wait_settled
from testkit.remote import s3_server, upload_tree
from testkit.sql import rows, scalar
from testkit.stores import S3Server

HALT_WATCH_SECONDS = 8.0
"""After the lockout trip opened, the drill watches this long that no object request reaches the server."""
IN_FLIGHT_GRACE_SECONDS = 2.0
"""Requests already in flight when the trip opened may still arrive this long after it."""
SOURCE = "bucket"


class StallWatch:
    """A thread that sleeps 10 ms at a time and keeps the longest oversleep: how long this process (and the server
    threads in it) went without being scheduled."""

    def __init__(self) -> None:
        self.worst = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._stop.is_set():
            before = time.monotonic()
            time.sleep(0.01)
            self.worst = max(self.worst, time.monotonic() - before - 0.01)

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return round(self.worst, 3)


def fetched(home: Home) -> int:
    """Remote cards whose bytes were fetched and hashed."""
    return int(scalar(home, "SELECT count(*) FROM card WHERE content_verified AND remote_token IS NOT NULL"))


def open_lockout(home: Home) -> tuple | None:
    """(id, named source, tripped at) of the open fetch-lockout trip, if any."""
    found = rows(home, "SELECT id, detail ->> 'source', extract(epoch from tripped_at) FROM envelope_trip "
                       "WHERE acknowledged_at IS NULL AND bar = 'fetch_lockout'")
    return found[0] if found else None


def throttle_storm(home: Home, dev: Dev, server: S3Server, figures: dict[str, Any], requests: int,
                   timeout: float) -> None:
    """The next `requests` object requests throttled: the shared pace halves."""
    with server.faults.lock:
        server.faults.storm_status, server.faults.storm = 429, requests
    figures["storm_at"] = fetched(home)
    wait_for(lambda: server.faults.storm == 0, timeout, "the storm to pass", every=dev.record)
    figures["halvings"] = int(scalar(home, "SELECT halvings FROM fetch_pace"))
    assert figures["halvings"] >= 1, "a 429 storm halves the shared pace"


def lockout(home: Home, dev: Dev, server: S3Server, figures: dict[str, Any]) -> None:
    """Every object request forbidden: a trip naming the source opens, fetching stops until a person acknowledges
    the trip, then resumes."""
    server.faults.lockout = True
    locked_at = time.monotonic()
    trip = wait_for(lambda: open_lockout(home), 120, "the lockout trip", every=dev.record, poll=0.2)
    figures["lockout_trip_s"] = round(time.monotonic() - locked_at, 1)
    assert trip[1] == SOURCE, f"the trip names the source: {trip}"
    tripped = time.monotonic()
    time.sleep(HALT_WATCH_SECONDS)
    late = [s for s in server.record.seen if s.at > tripped + IN_FLIGHT_GRACE_SECONDS]
    assert late == [], f"{len(late)} object requests reached the store while the lockout trip was open"
    server.faults.lockout = False
    home.stage_e("trips", "ack", str(trip[0]), "--note", "drill: the store lifted the block")
    acked = time.monotonic()
    wait_for(lambda: any(s.at > acked for s in server.record.seen), 120, "fetching to resume after the ack",
             every=dev.record, poll=0.2)
    figures["resume_after_ack_s"] = round(time.monotonic() - acked, 1)


def check_outcome(home: Home, server: S3Server, figures: dict[str, Any], cards: int, rate: float) -> None:
    """Every card done once, none failed by a fetch, one lockout trip, and the server-side rate within the limit."""
    assert_each_card_done_once(home, cards)
    failed = rows(home, "SELECT identifier, fetch_failed FROM card WHERE fetch_failed IS NOT NULL")
    assert failed == [], f"the storm and the lockout failed cards: {failed[:5]}"
    trips = scalar(home, "SELECT count(*) FROM envelope_trip WHERE bar = 'fetch_lockout'")
    assert trips == 1, f"one lockout, one trip (found {trips})"
    statuses = server.record.statuses()
    doubles = sum(n - 1 for n in server.record.completed.values() if n > 1)
    figures.update(requests=len(server.record.seen), ok=statuses.get(200, 0), throttled=statuses.get(429, 0),
                   forbidden=statuses.get(403, 0), doubles=doubles, max_1s=server.record.max_per_second(),
                   max_1s_sliding=server.record.max_in_window(1.0))
    assert doubles == 0, f"{doubles} objects were sent in full more than once"
    assert len(server.record.completed) == cards, "every object sent in full once"
    assert figures["max_1s"] <= rate, f"the server saw {figures['max_1s']} requests in one second (limit {rate})"


def drill(home: Home, start_dev: Callable[[], Dev], server: S3Server, figures: dict[str, Any], cards: int = 500,
          batch: int = 50, rate: float = 7.0, storm: int = 30, timeout: float = 1800, ctrl_c: bool = True) -> None:
    """Run the drill on `home` (a fresh one) against `server`; `start_dev` starts `stage-e dev`. Fills `figures`.
    With `ctrl_c` the drill ends with Ctrl-C to `stage-e dev` and checks that no process of its tree is left."""
    figures.update(cards=cards, rate=rate)
    data = demo_corpus_cli(home, cards, source=None)
    assert upload_tree(server, data / "scans", "scans") == cards
    stream_env(home, batch, slots=1, STAGE_E_FETCH_RATE=str(rate), STAGE_E_REMOTE_LIST_INTERVAL_SECONDS="2",
               STAGE_E_FETCH_LOCKOUT_403S="5", **server.credentials_env("DRILL"))
    home.stage_e("sources", "add", f"s3://{server.bucket}/scans", "--key", SOURCE, "--endpoint", server.endpoint,
                 "--credentials", "DRILL")
    started = time.monotonic()
    stalls = StallWatch()
    dev = start_dev()
    dev.wait_ready()
    wait_for(lambda: fetched(home) >= cards // 3, timeout, "a third of the cards fetched", every=dev.record)
    throttle_storm(home, dev, server, figures, storm, timeout)
    wait_for(lambda: fetched(home) >= 2 * cards // 3, timeout, "two thirds of the cards fetched", every=dev.record)
    lockout(home, dev, server, figures)
    wait_settled(home, dev, timeout)
    figures["seconds"] = round(time.monotonic() - started)
    figures["server_stall_max_s"] = stalls.stop()
    check_outcome(home, server, figures, cards, rate)
    if not ctrl_c:
        return
    assert dev.ctrl_c() == 0
    left = dev.left_behind()
    assert left == [], f"processes left behind: {left}"


def run(figures: dict[str, Any] | None = None, *, cards: int = 500, batch: int = 50, rate: float = 7.0,
        storm: int = 30, timeout: float = 1800, ctrl_c: bool = True) -> dict[str, Any]:
    """The drill on a throwaway home and a fresh server; returns the figures (AssertionError on a broken rule).
    `ctrl_c`: see `drill`."""
    figures = {} if figures is None else figures
    with live.home() as home, s3_server() as server:
        devs = live.Devs(home)
        try:
            drill(home, devs, server, figures, cards=cards, batch=batch, rate=rate, storm=storm,
                  timeout=timeout, ctrl_c=ctrl_c)
        finally:
            devs.kill_all()
    return figures


def main(argv: list[str] | None = None) -> None:
    parser = verdict.parser_for("remote", __doc__)
    parser.add_argument("--cards", type=int, default=500)
    parser.add_argument("--batch", type=int, default=50)
    parser.add_argument("--rate", type=float, default=7.0, help="STAGE_E_FETCH_RATE, fetches/s")
    parser.add_argument("--storm", type=int, default=30, help="object requests answered 429 in a row")
    parser.add_argument("--timeout", type=float, default=1800)
    verdict.drill_main("remote", run, parser, argv)
