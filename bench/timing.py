"""Timing the database benchmarks share: a call's median and slowest wall time over repeated calls."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def timed(call: Callable[[], object], repeats: int) -> tuple[float, float]:
    """(median, max) wall ms of `repeats` calls after one warm-up call."""
    call()
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        call()
        times.append(1000 * (time.perf_counter() - started))
    return statistics.median(times), max(times)
