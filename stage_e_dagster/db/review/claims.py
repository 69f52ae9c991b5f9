"""Claims on the review page (`review_claim`): two reviewers on one queue are never shown the same card at once.

A reviewer holds at most one claim: the card they have open. Opening a card claims it for `lease` seconds (the page
renews the claim while it stays open); the next-card query leaves out cards someone else holds, so reviewers
working the same queue fan out over it. A vote or a skip releases the claim at once, and an abandoned claim (a
closed tab, a crashed browser) simply expires.

The claim is one statement: an upsert on the card id that takes the row only when it is free, expired or already
the reviewer's own. Two reviewers racing for the same card are ordered by Postgres on that row; the loser gets no
row back and moves on to the next card.

The claim statements run in the caller's transaction; `claim_next` takes an engine because it owns its transaction
and retries it from the start after a deadlock (`in_transaction`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Connection, Engine, text

from stage_e_dagster.db.core.transactions import in_transaction
from stage_e_dagster.db.review.page import QueueEntry, queue_entries

_CLAIM = text(
    "INSERT INTO review_claim AS rc (card_id, reviewer, claimed_at, expires_at) "
    "VALUES (:card_id, :reviewer, now(), now() + make_interval(secs => :lease)) "
    "ON CONFLICT (card_id) DO UPDATE SET reviewer = EXCLUDED.reviewer, expires_at = EXCLUDED.expires_at, "
    "claimed_at = CASE WHEN rc.reviewer = EXCLUDED.reviewer THEN rc.claimed_at ELSE now() END "
    "WHERE rc.reviewer = EXCLUDED.reviewer OR rc.expires_at <= now() "
    "RETURNING card_id"
)
_HOLDER = text("SELECT reviewer FROM review_claim WHERE card_id = :card_id AND expires_at > now()")
_MINE = text("SELECT card_id FROM review_claim WHERE reviewer = :reviewer AND expires_at > now() ORDER BY card_id")
_RELEASE = text("DELETE FROM review_claim WHERE card_id = :card_id AND reviewer = :reviewer")
_RELEASE_OTHERS = text("DELETE FROM review_claim WHERE reviewer = :reviewer AND card_id <> :keep")
_FORGET_EXPIRED = text("DELETE FROM review_claim WHERE expires_at < now() - interval '1 hour'")
_CANDIDATES = 5


def claim(conn: Connection, card_id: int, reviewer: str, lease: float) -> str | None:
    """Claim (or renew) `card_id` for `reviewer`; None when they hold it now, else the reviewer who does."""
    if conn.execute(_CLAIM, {"card_id": card_id, "reviewer": reviewer, "lease": float(lease)}).first():
        return None
    return conn.execute(_HOLDER, {"card_id": card_id}).scalar() or reviewer


def holder(conn: Connection, card_id: int) -> str | None:
    """Who has the card open right now, if anyone."""
    return conn.execute(_HOLDER, {"card_id": card_id}).scalar()


def release(conn: Connection, card_id: int, reviewer: str) -> None:
    """Give the card back (after a vote or a skip); another reviewer's claim is left alone."""
    conn.execute(_RELEASE, {"card_id": card_id, "reviewer": reviewer})


@dataclass(frozen=True)
class NextCard:
    """The card claimed for a reviewer (None: nothing left for them) and the one likely after it (to prefetch)."""

    card_id: int | None
    then: int | None = None


def claim_next(engine: Engine, reviewer: str, lease: float, exclude: Sequence[int] = ()) -> NextCard:
    """Claim the reviewer's next card: the one they already hold if it still awaits them, else the oldest card
    awaiting a person that they have not voted on, skipped (`exclude`) or lost to another reviewer."""
    return in_transaction(engine, lambda conn: _claim_next(conn, reviewer, lease, exclude))


def _claim_next(conn: Connection, reviewer: str, lease: float, exclude: Sequence[int]) -> NextCard:
    conn.execute(_FORGET_EXPIRED)
    held = list(conn.execute(_MINE, {"reviewer": reviewer}).scalars())
    if held:
        still = queue_entries(conn, reviewer=reviewer, unvoted_only=True, exclude=exclude, card_ids=held, limit=1)
        if still and claim(conn, still[0].card_id, reviewer, lease) is None:
            return _claimed(conn, still[0].card_id, reviewer, exclude)
    lost: list[int] = []
    while True:
        entries = _open_for(conn, reviewer, [*exclude, *lost], _CANDIDATES)
        if not entries:
            release_all(conn, reviewer)
            return NextCard(None)
        for entry in entries:
            if claim(conn, entry.card_id, reviewer, lease) is None:
                return _claimed(conn, entry.card_id, reviewer, exclude)
            lost.append(entry.card_id)


def _open_for(conn: Connection, reviewer: str, exclude: Sequence[int], limit: int) -> list[QueueEntry]:
    """Cards awaiting `reviewer` that nobody else has open."""
    return queue_entries(conn, reviewer=reviewer, unvoted_only=True, exclude=exclude, unclaimed_by_others=True,
                         limit=limit)


def _claimed(conn: Connection, card_id: int, reviewer: str, exclude: Sequence[int]) -> NextCard:
    conn.execute(_RELEASE_OTHERS, {"reviewer": reviewer, "keep": card_id})
    after = _open_for(conn, reviewer, [*exclude, card_id], 1)
    return NextCard(card_id, after[0].card_id if after else None)


def release_all(conn: Connection, reviewer: str) -> None:
    """Give back every card the reviewer holds (they signed out)."""
    conn.execute(_RELEASE_OTHERS, {"reviewer": reviewer, "keep": 0})
