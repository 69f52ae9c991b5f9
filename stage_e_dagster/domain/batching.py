"""Pure batch planning for the stream sensor and the backstop sweep: batches, run keys, tags, queue room.

Run keys are deterministic so that evaluating the same batch twice gives the same key (the daemon then launches it
once). The daemon never reuses a key, so a key must change whenever the batch deserves a new run: stream keys
hash each card's id together with its version (content hash and update time), sweep keys name the claimed range.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")

TAG_TRIGGER = "stage_e/trigger"
TAG_MODE = "stage_e/mode"
TAG_BATCH_SIZE = "stage_e/batch_size"
TAG_FIRST_CARD = "stage_e/first_card"
TAG_LAST_CARD = "stage_e/last_card"


def split_batches(items: Sequence[T], size: int) -> list[tuple[T, ...]]:
    """Consecutive batches of at most `size` items, order kept; the last one may be short."""
    if size < 1:
        raise ValueError(f"batch size must be at least 1, not {size}")
    return [tuple(items[i : i + size]) for i in range(0, len(items), size)]


def runs_allowed(queued: int, max_queued: int, max_per_tick: int) -> int:
    """How many runs one tick may request: the per-tick cap, never more than the room left in the queue."""
    return max(0, min(max_per_tick, max_queued - queued))


def stream_run_key(members: Sequence[tuple[int, str]]) -> str:
    """Key of a stream batch from its (card id, card version) pairs; same members, same key."""
    if not members:
        raise ValueError("a batch has at least one card")
    digest = hashlib.sha256()
    for card_id, version in members:
        digest.update(f"{card_id}:{version}\n".encode())
    first, last = members[0][0], members[-1][0]
    return f"card-event-{first}-{last}-{len(members)}-{digest.hexdigest()[:16]}"


def sweep_run_key(cursor: str, wrap_count: int, start: int, end: int, index: int) -> str:
    """Key of batch `index` of the range (start, end] a sweep cursor claimed in pass `wrap_count`."""
    return f"backstop-sweep-{cursor}-w{wrap_count}-{start}-{end}-{index}"


def batch_tags(trigger: str, mode: str, card_ids: Sequence[int]) -> dict[str, str]:
    """Short run tags describing a batch; the id list itself travels in run config, never in a tag."""
    if not card_ids:
        raise ValueError("a batch has at least one card")
    return {
        TAG_TRIGGER: trigger,
        TAG_MODE: mode,
        TAG_BATCH_SIZE: str(len(card_ids)),
        TAG_FIRST_CARD: str(card_ids[0]),
        TAG_LAST_CARD: str(card_ids[-1]),
    }
