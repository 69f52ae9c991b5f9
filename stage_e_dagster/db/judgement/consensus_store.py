"""Card consensus in the database: recomputing it from a card's votes, and the counts by state.

Every writer of votes or consensus locks the card rows it touches first, in card-id order
(`db.core.transactions.lock_cards`), so concurrent overlapping batches neither double-vote nor leave a stale
consensus; a deadlock with some other writer of `card` (ingest) is retried by `db.core.transactions.in_transaction`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import Connection, text

from stage_e_dagster.db.arrays import int_array, text_array
from stage_e_dagster.db.core.transactions import lock_cards
from stage_e_dagster.domain.consensus import POLICIES, CastVote, Resolution, resolve

_VOTES = text(
    "SELECT card_id, printing_id, is_no_match, source, anonymous_id FROM card_printing_tag "
    "WHERE card_id = ANY(CAST(:ids AS bigint[]))"
)
_STATES = text(
    "SELECT id, printing_status, resolved_printing_id FROM card WHERE id = ANY(CAST(:ids AS bigint[]))"
)
_UPDATE = text(
    "UPDATE card AS c SET printing_status = v.status, resolved_printing_id = v.printing_id "
    "FROM unnest(CAST(:ids AS bigint[]), CAST(:statuses AS text[]), CAST(:printings AS bigint[])) "
    "AS v(id, status, printing_id) WHERE c.id = v.id"
)


def check_policy(policy: str) -> str:
    """`policy` if it is a known consensus policy; ValueError naming the known ones otherwise."""
    if policy not in POLICIES:
        raise ValueError(f"unknown consensus policy {policy!r}; expected one of {', '.join(POLICIES)}")
    return policy


@dataclass
class ConsensusResult:
    """Consensus of a set of cards after recomputation: final states and how many changed."""

    resolved: int = 0
    no_match: int = 0
    unresolved: int = 0
    changed: int = 0
    newly_resolved: int = 0

    def merge(self, other: ConsensusResult) -> None:
        for name in vars(self):
            setattr(self, name, getattr(self, name) + getattr(other, name))


def card_votes(conn: Connection, card_ids: Iterable[int]) -> dict[int, list[CastVote]]:
    """Every stored vote of each card, as consensus sees them."""
    ids = sorted(set(card_ids))
    votes: dict[int, list[CastVote]] = defaultdict(list)
    if ids:
        for row in conn.execute(_VOTES, {"ids": int_array(ids)}):
            votes[row.card_id].append(CastVote(row.printing_id, row.is_no_match, row.source, row.anonymous_id))
    return votes


def recompute_consensus(
    conn: Connection, card_ids: Iterable[int], policy: str = "funnel"
) -> tuple[ConsensusResult, dict[int, Resolution]]:
    """Resolve each card from all its votes under `policy` and store `printing_status`/`resolved_printing_id`.

    Locks the cards first (a no-op for locks this transaction already holds); only changed rows are updated.
    Returns the counts and each existing card's resolution.
    """
    check_policy(policy)
    ids = sorted(lock_cards(conn, card_ids))
    result = ConsensusResult()
    if not ids:
        return result, {}
    votes = card_votes(conn, ids)
    rows = conn.execute(_STATES, {"ids": int_array(ids)})
    states = {row.id: (row.printing_status, row.resolved_printing_id) for row in rows}
    resolutions: dict[int, Resolution] = {}
    changed: list[tuple[int, str, int | None]] = []
    for card_id in ids:
        resolution = resolve(votes.get(card_id, []), policy)
        resolutions[card_id] = resolution
        state = (resolution.printing_status, resolution.resolved_printing_id)
        setattr(result, state[0], getattr(result, state[0]) + 1)
        if states.get(card_id) != state:
            changed.append((card_id, *state))
            if state[0] == "resolved":
                result.newly_resolved += 1
    if changed:
        conn.execute(_UPDATE, {"ids": int_array(c[0] for c in changed), "statuses": text_array(c[1] for c in changed),
                               "printings": int_array(c[2] for c in changed)})
    result.changed = len(changed)
    return result, resolutions


_STATE_COUNTS = text(
    "SELECT printing_status, count(*) FROM card WHERE id = ANY(CAST(:ids AS bigint[])) GROUP BY printing_status"
)


def state_counts(conn: Connection, card_ids: Iterable[int]) -> dict[str, int]:
    """How many of the cards are resolved, no_match and unresolved right now (every state present, zeros too)."""
    counts = {"resolved": 0, "no_match": 0, "unresolved": 0}
    ids = sorted(set(card_ids))
    if ids:
        for status, count in conn.execute(_STATE_COUNTS, {"ids": int_array(ids)}):
            counts[status] = int(count)
    return counts
