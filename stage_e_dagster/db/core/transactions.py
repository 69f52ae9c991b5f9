"""Transactions every writer of cards shares: the card rows locked in id order, and a transaction retried from the
start after a deadlock.

Every writer of votes, consensus or a card's Stage D mark (Stage D batches, human votes, a catalogue change
re-opening cards) locks the card rows it touches first, in card-id order (`FOR NO KEY UPDATE`: inserting votes and
evidence, which only take key-share locks on `card`, is not blocked). Under that lock a compare-then-write sees every
committed change of the same cards, and the fixed order means two writers queue instead of deadlocking. A deadlock
with some other writer of `card` (ingest) is retried by `in_transaction`, which only the owner of the transaction
can do.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import TypeVar

from psycopg2 import errors as pg_errors
from sqlalchemy import Connection, Engine, text
from sqlalchemy.exc import DBAPIError

from stage_e_dagster.db.arrays import int_array

T = TypeVar("T")
RETRY_ATTEMPTS = 4
_RETRYABLE = (pg_errors.DeadlockDetected, pg_errors.SerializationFailure)

_LOCK_CARDS = text(
    "SELECT id FROM card WHERE id = ANY(CAST(:ids AS bigint[])) ORDER BY id FOR NO KEY UPDATE"
)


def lock_cards(conn: Connection, card_ids: Iterable[int]) -> set[int]:
    """Lock the cards' rows for this transaction, in id order; returns the ids that exist."""
    ids = sorted(set(card_ids))
    if not ids:
        return set()
    return set(conn.execute(_LOCK_CARDS, {"ids": int_array(ids)}).scalars())


def in_transaction(engine: Engine, work: Callable[[Connection], T], attempts: int = RETRY_ATTEMPTS) -> T:
    """Run `work` in one transaction, retrying it from the start after a deadlock or serialization failure."""
    for attempt in range(1, attempts + 1):
        try:
            with engine.begin() as conn:
                return work(conn)
        except DBAPIError as err:
            if attempt == attempts or not isinstance(err.orig, _RETRYABLE):
                raise
            time.sleep(0.05 * attempt)
    raise AssertionError("unreachable")
