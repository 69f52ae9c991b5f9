"""The operating envelope's bars: pure rules that judge sampled host signals against ceilings.

Three bars, judged in this order: `host_load` (1-minute load average), `rss` (the largest resident memory of the
checked worker processes, in MB) and `image_failure_rate` (failed share of the most recent image loads, judged
only once enough loads exist; loads before the newest acknowledgement of such a trip are not judged again). A bar
trips only when its observed value is strictly greater than its ceiling; a signal that could not be read (None)
skips its bar. Only `passive` runs are held to the envelope.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

FAILURE_RATE_BAR = "image_failure_rate"
BARS = ("host_load", "rss", FAILURE_RATE_BAR)
ENFORCED_MODES = ("passive",)


@dataclass(frozen=True)
class LoadCounts:
    """How many of the most recent image loads there were, and how many of them failed."""

    loads: int
    failures: int


@dataclass(frozen=True)
class Signals:
    """One sample of the host. None (or a missing pid) means that signal could not be read."""

    host_load: float | None = None
    rss_mb: Mapping[int, float] = field(default_factory=dict)
    image_loads: LoadCounts | None = None


@dataclass(frozen=True)
class Ceilings:
    """The envelope's limits. `failure_min_loads`: fewer loads than this are never judged."""

    host_load: float
    rss_mb: float = 1024.0
    failure_rate: float = 0.01
    failure_min_loads: int = 50


@dataclass(frozen=True)
class Breach:
    """A bar whose observed value is above its ceiling; `detail` says where the value came from."""

    bar: str
    observed: float
    ceiling: float
    detail: dict[str, Any] = field(default_factory=dict)

    def describe(self) -> str:
        return f"envelope tripped: {self.bar} observed {self.observed:g} > ceiling {self.ceiling:g}"


def enforced(mode: str) -> bool:
    """Whether runs in `mode` are held to the envelope (`bulk` runs are exempt)."""
    return mode in ENFORCED_MODES


def evaluate_bars(signals: Signals, ceilings: Ceilings) -> Breach | None:
    """The first bar (in `BARS` order) whose signal is strictly above its ceiling, or None."""
    load = signals.host_load
    if load is not None and load > ceilings.host_load:
        return Breach("host_load", float(load), float(ceilings.host_load))
    if signals.rss_mb:
        pid, rss = max(signals.rss_mb.items(), key=lambda item: item[1])
        if rss > ceilings.rss_mb:
            return Breach("rss", float(rss), float(ceilings.rss_mb), {"pid": pid})
    counts = signals.image_loads
    if counts is not None and counts.loads >= max(ceilings.failure_min_loads, 1):
        rate = counts.failures / counts.loads
        if rate > ceilings.failure_rate:
            return Breach(FAILURE_RATE_BAR, rate, float(ceilings.failure_rate),
                          {"loads": counts.loads, "failures": counts.failures})
    return None
