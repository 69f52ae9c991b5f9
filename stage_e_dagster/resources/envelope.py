"""The operating envelope as a Dagster resource: sample the host, govern OCR concurrency by its load, and fail a
passive run that is over a bar.

Assets call `check(mode=...)` when they start and Stage C calls `maybe_check(mode=..., worker_pids=...)` inside
its loop (it samples at most every `sample_interval_seconds`). A breach raises `EnvelopeTripped`, a typed
`dagster.Failure` whose metadata is exactly `bar`, `observed` and `ceiling`. Given the run id, the check records the
`envelope_trip` row itself at the breach (the run-failure sensor records it otherwise), which halts the stream and
every queued run until an operator acknowledges it. `bulk` runs are never sampled.

`governor(max_workers)` gives Stage C a load governor (`domain.governor`) aiming at `load_target`, below the
host-load ceiling: OCR concurrency shrinks before the envelope has to trip.

The host's load comes from `load_source`, a `HostLoad` resource (this host's 1-minute load average unless another
source is given): the envelope's bar and the governor read the same signal, and a test can set it. The other signal
readers are methods (`read_rss_mb`, `read_image_loads`); a reader that cannot read its signal returns None (or leaves
the pid out) and that bar is skipped.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterable
from typing import Any

import psutil
from dagster import ConfigurableResource, Failure
from pydantic import Field, PrivateAttr
from sqlalchemy.exc import SQLAlchemyError

from stage_e_dagster.db.runs import trips
from stage_e_dagster.db.runs.image_loads import recent_load_counts
from stage_e_dagster.domain.envelope import Breach, Ceilings, LoadCounts, Signals, enforced, evaluate_bars
from stage_e_dagster.domain.governor import Governor
from stage_e_dagster.host import default_load_ceiling, default_load_target
from stage_e_dagster.resources.database import AppDatabase
from stage_e_dagster.settings import Settings

logger = logging.getLogger(__name__)

MB = 1024 * 1024


class EnvelopeTripped(Failure):
    """A passive run went over an envelope bar. Metadata: `bar`, `observed`, `ceiling`; never retried."""

    def __init__(self, breach: Breach) -> None:
        detail = ", ".join(f"{key}={value}" for key, value in sorted(breach.detail.items()))
        description = breach.describe() + (f" ({detail})" if detail else "")
        super().__init__(
            description=description,
            metadata={"bar": breach.bar, "observed": float(breach.observed), "ceiling": float(breach.ceiling)},
            allow_retries=False,
        )
        self.breach = breach

    def __reduce__(self) -> tuple[type[EnvelopeTripped], tuple[Breach]]:
        return (type(self), (self.breach,))  # picklable across worker processes


class HostLoad(ConfigurableResource):
    """Where the envelope and the load governor read the host's load: this host's 1-minute load average."""

    def read(self) -> float | None:
        """The load now; None when it cannot be read."""
        try:
            return float(os.getloadavg()[0])
        except (OSError, AttributeError):
            return None


class Envelope(ConfigurableResource):
    """Host-load, worker-memory and image-failure-rate bars for passive runs."""

    database: AppDatabase = Field(description="The application database (image loads of all workers).")
    host_load_ceiling: float | None = Field(
        default=None, description="1-minute load average above this trips; default 2 x CPUs."
    )
    load_target: float | None = Field(
        default=None, description="The load governor shrinks OCR concurrency above this; default 1.5 x CPUs."
    )
    rss_ceiling_mb: float = Field(default=Settings.rss_ceiling_mb,
                                  description="A worker's resident memory above this (MB) trips.")
    failure_rate_ceiling: float = Field(
        default=Settings.image_failure_rate_ceiling, description="Failed share of the recent image loads above this "
                                                                 "trips."
    )
    failure_window: int = Field(default=Settings.image_failure_window,
                                description="How many of the newest image loads are judged.")
    failure_min_loads: int = Field(default=Settings.image_failure_min_loads,
                                   description="Fewer loads than this are never judged.")
    sample_interval_seconds: float = Field(
        default=Settings.envelope_sample_seconds, description="`maybe_check` samples at most this often (per process)."
    )
    trip_max_open_seconds: float = Field(
        default=Settings.trip_max_open_seconds, gt=0,
        description="The `no_stale_open_trip` check fails once a trip stayed unacknowledged this long.",
    )
    load_source: HostLoad | None = Field(
        default=None, description="Where the host's load is read; unset: this host's 1-minute load average.")

    _last_sampled: float | None = PrivateAttr(default=None)

    # -- public API --------------------------------------------------------------------------------------------
    def ceilings(self) -> Ceilings:
        """The configured limits, with the host-load default resolved."""
        load = default_load_ceiling() if self.host_load_ceiling is None else float(self.host_load_ceiling)
        return Ceilings(host_load=load, rss_mb=float(self.rss_ceiling_mb),
                        failure_rate=float(self.failure_rate_ceiling), failure_min_loads=int(self.failure_min_loads))

    def governor(self, max_workers: int) -> Governor:
        """A load governor for one batch of up to `max_workers` OCR workers."""
        target = default_load_target() if self.load_target is None else float(self.load_target)
        return Governor(target=target, max_workers=max(1, max_workers))

    def sample(self, worker_pids: Iterable[int] = ()) -> Signals:
        """Read every signal now: load average, RSS of this process and `worker_pids`, recent image loads."""
        pids = {os.getpid(), *worker_pids}
        return Signals(host_load=self.read_host_load(), rss_mb=self.read_rss_mb(pids),
                       image_loads=self.read_image_loads())

    def check(self, mode: str, worker_pids: Iterable[int] = (), now: float | None = None,
              run_id: str | None = None, detail: dict[str, Any] | None = None) -> None:
        """Sample and raise `EnvelopeTripped` on a breach; returns without sampling for exempt (bulk) runs.

        With `run_id`, the trip is recorded for that run before the exception is raised, so a queued run that
        starts a moment later finds it open at its gate instead of tripping again; the run-failure sensor's own
        record of the same run is then a no-op (one trip per run). If the database cannot take the record, the
        sensor records it once the run's failure is seen."""
        if not enforced(mode):
            return
        self._last_sampled = time.monotonic() if now is None else now
        breach = evaluate_bars(self.sample(worker_pids), self.ceilings())
        if breach is None:
            return
        logger.warning("%s", breach.describe())
        if run_id is not None:
            try:
                with self.database.engine.begin() as conn:
                    trips.record_trip(conn, run_id, breach.bar[:32], breach.observed, breach.ceiling,
                                      {**breach.detail, **(detail or {}), "recorded_by": "run"})
            except SQLAlchemyError as err:
                logger.warning("envelope: the trip of run %s was not recorded now (%s); the run-failure sensor "
                               "records it", run_id, type(err).__name__)
        raise EnvelopeTripped(breach)

    def maybe_check(self, mode: str, worker_pids: Iterable[int] = (), now: float | None = None,
                    run_id: str | None = None, detail: dict[str, Any] | None = None) -> bool:
        """`check` unless this resource sampled less than `sample_interval_seconds` ago; True when it sampled.

        `now` is a monotonic clock reading (default `time.monotonic()`), injectable for tests.
        """
        if not enforced(mode):
            return False
        moment = time.monotonic() if now is None else now
        last = self._last_sampled
        if last is not None and moment - last < self.sample_interval_seconds:
            return False
        self.check(mode, worker_pids, now=moment, run_id=run_id, detail=detail)
        return True

    # -- signal readers (None or a missing pid = unreadable, that bar is skipped) ------------------------------
    def read_host_load(self) -> float | None:
        load = (self.load_source or HostLoad()).read()
        if load is None:
            logger.warning("envelope: host load unreadable; host_load bar skipped")
        return load

    def read_rss_mb(self, pids: Iterable[int]) -> dict[int, float]:
        readings: dict[int, float] = {}
        for pid in pids:
            try:
                readings[pid] = psutil.Process(pid).memory_info().rss / MB
            except (psutil.Error, OSError):
                logger.debug("envelope: RSS of pid %s unreadable; skipped", pid)
        return readings

    def read_image_loads(self) -> LoadCounts | None:
        try:
            with self.database.engine.connect() as conn:
                return recent_load_counts(conn, self.failure_window)
        except Exception as err:  # noqa: BLE001 - an unreadable signal skips its bar; the message may hold the URL
            logger.warning("envelope: recent image loads unreadable (%s); image_failure_rate bar skipped",
                           type(err).__name__)
            return None
