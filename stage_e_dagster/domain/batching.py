"""Pure batch planning for the backstop sweep: batches and run keys.

Run keys are deterministic so that evaluating the same batch twice gives the same key (the daemon then launches it
once). The daemon never reuses a key, so a key must change whenever the batch deserves a new run: a sweep key names
the cursor, its pass and the claimed range.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def split_batches(items: Sequence[T], size: int) -> list[tuple[T, ...]]:
    """Consecutive batches of at most `size` items, order kept; the last one may be short."""
    if size < 1:
        raise ValueError(f"batch size must be at least 1, not {size}")
    return [tuple(items[i : i + size]) for i in range(0, len(items), size)]


def sweep_run_key(cursor: str, wrap_count: int, start: int, end: int, index: int) -> str:
    """Key of batch `index` of the range (start, end] a sweep cursor claimed in pass `wrap_count`."""
    return f"backstop-sweep-{cursor}-w{wrap_count}-{start}-{end}-{index}"
