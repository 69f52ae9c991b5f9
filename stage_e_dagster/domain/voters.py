"""Voter identities and vote history as pure rules: calculator families, and why a stored vote leaves.

A machine voter id is `<family>-v<N>`: the calculator family and its version. Versions of one family are one voter
that changed over time, never two opinions: when a newer version decides a card, the older versions' votes on that
card are withdrawn (`superseded`), and consensus counts only the newest version of each family present
(`newest_per_family`). Human voter ids are names; they are never treated as families, even when they look like one.

A vote that leaves `card_printing_tag` is archived with one of `ARCHIVE_REASONS`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_VOTER_ID = re.compile(r"^(?P<family>[a-z0-9][a-z0-9-]*?)-v(?P<version>\d+)$")

REPLACED = "replaced"
"""A machine voter concluded something else about the card: its previous votes were replaced."""
WITHDRAWN = "withdrawn"
"""A machine voter no longer votes on the card (it abstained or did not run on the latest pass)."""
FAMILY_BUMP = "family-bump"
"""A newer version of the voter's calculator family decided the card."""
HUMAN_OVERRIDE = "human-override"
"""A person cast a different vote on the card, which overrides their earlier one."""
ARCHIVE_REASONS = (REPLACED, WITHDRAWN, FAMILY_BUMP, HUMAN_OVERRIDE)


def split_voter_id(voter_id: str) -> tuple[str, int]:
    """(`family`, `version`) of a voter id `<family>-v<N>`; ValueError for an id not of that form."""
    match = _VOTER_ID.match(voter_id)
    if match is None:
        raise ValueError(f"voter id {voter_id!r} is not of the form <family>-v<N>")
    return match["family"], int(match["version"])


def family_version(voter_id: str) -> tuple[str, int] | None:
    """(`family`, `version`) of a machine voter id, or None for an id not of the form `<family>-v<N>`."""
    try:
        return split_voter_id(voter_id)
    except ValueError:
        return None


def superseded(stored: Iterable[str], deciding: Iterable[str]) -> dict[str, str]:
    """Stored machine voter ids that a deciding voter of the same family and a newer version retires, each mapped
    to the newest such deciding voter (an older or equal version, or another family, retires nothing)."""
    newest: dict[str, tuple[int, str]] = {}
    for voter in deciding:
        parsed = family_version(voter)
        if parsed is not None and (parsed[0] not in newest or parsed[1] > newest[parsed[0]][0]):
            newest[parsed[0]] = (parsed[1], voter)
    retired: dict[str, str] = {}
    for voter in stored:
        parsed = family_version(voter)
        if parsed is not None and parsed[0] in newest and parsed[1] < newest[parsed[0]][0]:
            retired[voter] = newest[parsed[0]][1]
    return retired


def newest_per_family(voter_ids: Iterable[str]) -> set[str]:
    """The voter ids to count: for each family, only its newest version present; other ids as they are."""
    ids = set(voter_ids)
    return ids - set(superseded(ids, ids))


def archive_reason(replacement_is_empty: bool, human: bool) -> str:
    """Why a voter's stored votes on a card leave when that voter writes a different conclusion."""
    if human:
        return HUMAN_OVERRIDE
    return WITHDRAWN if replacement_is_empty else REPLACED
