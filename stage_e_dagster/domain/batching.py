"""Pure batch planning for the stream sensor and the backstop sweep: batches, run keys, queue room.

Run keys are deterministic so that evaluating the same batch twice gives the same key (the daemon then launches it
once). The daemon never reuses a key, so a key must change whenever the batch deserves a new run: stream keys
hash each card's id together with its version (content hash and attempt count), sweep keys name the claimed range.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def split_batches(items: Sequence[T], size: int) -> list[tuple[T, ...]]:
    """Consecutive batches of at most `size` items, order kept; the last one may be short."""
    if size < 1:
        raise ValueError(f"batch size must be at least 1, not {size}")
    return [tuple(items[i : i + size]) for i in range(0, len(items), size)]


def runs_allowed(queued: int, max_queued: int, max_per_tick: int) -> int:
    """How many runs one tick may request: the per-tick cap, never more than the room left in the queue."""
    return max(0, min(max_per_tick, max_queued - queued))


def stream_run_key(members: Sequence[tuple[int, str]], epoch: int = 0) -> str:
    """Key of a stream batch from its (card id, card version) pairs and a time epoch; same members and epoch,
    same key."""
    if not members:
        raise ValueError("a batch has at least one card")
    digest = hashlib.sha256(f"epoch {epoch}\n".encode())
    for card_id, version in members:
        digest.update(f"{card_id}:{version}\n".encode())
    first, last = members[0][0], members[-1][0]
    return f"card-event-{first}-{last}-{len(members)}-{digest.hexdigest()[:16]}"


def sweep_run_key(cursor: str, wrap_count: int, start: int, end: int, index: int) -> str:
    """Key of batch `index` of the range (start, end] a sweep cursor claimed in pass `wrap_count`."""
    return f"backstop-sweep-{cursor}-w{wrap_count}-{start}-{end}-{index}"
