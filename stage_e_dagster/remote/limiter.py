"""One fetch rate for the fleet: every fetch waits for its turn from the `fetch_pace` row (`db.intake.pace`), shared
by every process on every host that uses the application database.

Turns are `(1 + jitter_seconds) / rate` seconds apart, not `1 / rate`: `rate + 1` consecutive requests then span
`1 + jitter_seconds` seconds, so the store never counts more than `rate` of them in any one second as long as no
request reaches it more than `jitter_seconds` later than its turn relative to the others (a thread woken late, a
slow connection, a busy store). At 7/s and the default 0.25 s the fleet aims at 5.6/s.

When Postgres cannot be reached, the process falls back to a conservative local share of the rate (`fallback_share`
of it, with its own halving and recovery) and tries the database again after `RETRY_SHARED_SECONDS`; the fleet's
total stays under the limit as long as fewer than `1 / fallback_share` processes fetch at once. Listings are never
counted: only `acquire` before a fetch's request is.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError

from stage_e_dagster.db.intake import pace
from stage_e_dagster.domain.remote import THROTTLED, PaceRules

logger = logging.getLogger(__name__)

RETRY_SHARED_SECONDS = 5.0
LATE_SHARE = 0.5
"""A thread that wakes more than this share of `jitter_seconds` later than it asked to (a busy host's scheduler)
gives its shared turn up and takes a new one, so an oversleep never sends a request late; the rest of the allowance
is for the grant's answer and the way to the store."""
LATE_RETRIES = 20
"""Turns a thread may give up in a row before it sends anyway (a host too busy to keep any turn)."""


@dataclass(frozen=True)
class Turn:
    """A granted fetch: the pace generation it was granted under, whether the shared row granted it, and when its
    turn was (the database's clock; 0 for a local turn)."""

    generation: int
    shared: bool
    at: float = 0.0


class FleetLimiter:
    """Waits for fetch turns at `rate` fetches/s across the fleet (see the module docstring). Thread-safe."""

    def __init__(self, engine: Engine, rate: float, rules: PaceRules = PaceRules(), fallback_share: float = 0.25,
                 sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.monotonic,
                 jitter_seconds: float = 0.25) -> None:
        self.engine, self.rate, self.rules, self.fallback_share = engine, rate, rules, fallback_share
        self.jitter_seconds = jitter_seconds
        self.sleep, self.clock = sleep, clock
        self._lock = threading.Lock()
        self._local_until = float("-inf")  # use the local share until then (the database failed)
        self._local_tat = float("-inf")
        self._local_factor = 1.0
        self._local_generation = 0
        self._local_clean = 0
        self.waited_seconds = 0.0
        self.local_turns = 0
        self.late_turns = 0

    @property
    def interval(self) -> float:
        """Seconds between two turns at full pace (see the module docstring)."""
        return (1.0 + self.jitter_seconds) / self.rate

    def acquire(self) -> Turn:
        """Block until this process may start one fetch request; the turn to report its response against."""
        if self.clock() >= self._local_until:
            try:
                return self._shared_turn()
            except SQLAlchemyError as err:
                self._fall_back(err)
        with self._lock:
            now = self.clock()
            spacing = self.interval / self.fallback_share / self._local_factor
            start = max(self._local_tat, now)
            self._local_tat = start + spacing
            generation = self._local_generation
            self.local_turns += 1
        self._wait(start - now)
        return Turn(generation, False)

    def _shared_turn(self) -> Turn:
        """A turn from the shared row, waited for; a turn woken up late for (`LATE_SHARE`) is given up."""
        for _attempt in range(LATE_RETRIES + 1):
            with self.engine.connect() as conn:
                granted = pace.grant(conn, self.interval)
                conn.commit()
            answered = self.clock()
            self._wait(granted.wait_seconds)  # counted from the answer: never before the turn
            if self.clock() - (answered + granted.wait_seconds) <= self.jitter_seconds * LATE_SHARE:
                break
            self.late_turns += 1
        return Turn(granted.generation, True, granted.at)

    def report(self, turn: Turn, kind: str) -> None:
        """The response to `turn` was throttled (halve the pace), clean (a fetch, a 403 or a 404: count towards
        recovery), or anything else (no change)."""
        if kind != THROTTLED and kind not in ("fetched", "forbidden", "gone"):
            return
        if turn.shared:
            try:
                with self.engine.connect() as conn:
                    if kind == THROTTLED:
                        factor = pace.throttled(conn, turn.generation, self.interval, self.rules.floor)
                        if factor is not None:
                            logger.warning("fetch throttled by a store: the fleet's pace is now %.3g/s",
                                           self.rate * factor)
                    else:
                        pace.clean(conn, self.rules.recover_after)
                    conn.commit()
                return
            except SQLAlchemyError as err:
                self._fall_back(err)
        with self._lock:
            if kind == THROTTLED:
                if turn.generation == self._local_generation:
                    self._local_factor = self.rules.halved(self._local_factor)
                    self._local_generation += 1
                    self._local_clean = 0
            else:
                self._local_clean += 1
                if self._local_clean >= self.rules.recover_after and self._local_factor < 1:
                    self._local_factor = self.rules.recovered(self._local_factor)
                    self._local_generation += 1
                    self._local_clean = 0

    def _wait(self, seconds: float) -> None:
        if seconds > 0:
            self.waited_seconds += seconds
            self.sleep(seconds)

    def _fall_back(self, err: Exception) -> None:
        with self._lock:
            if self.clock() >= self._local_until:
                logger.warning("fetch limiter: the database is unreachable (%s); fetching at a local share of "
                               "%.3g/s for %g s", type(err).__name__, self.rate * self.fallback_share,
                               RETRY_SHARED_SECONDS)
            self._local_until = self.clock() + RETRY_SHARED_SECONDS
