"""Identity groups: cards whose bytes are identical (same `content_sha256`) are copies of one image.

A group shares one Stage C extraction (its leader's: the lowest card id among the copies still needing one) and
one human judgement (a vote on one copy applies to every copy). Each copy keeps its own card row, its own votes and
its own consensus, because copies may differ in what the catalogue can say about them (file name, hint).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping


def copy_groups(card_ids: Iterable[int], hashes: Mapping[int, str]) -> dict[str, list[int]]:
    """The cards grouped by content hash, each group in id order (its first card is the group's leader)."""
    groups: dict[str, list[int]] = {}
    for card_id in sorted(set(card_ids)):
        groups.setdefault(hashes[card_id], []).append(card_id)
    return groups
