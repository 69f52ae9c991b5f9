"""The human review queue: cards the slow path routed `to-review` that still need a person.

A card is in the queue when it has a `to-review` marker, is still `unresolved`, is not missing from its source,
and its stored machine votes show no confident hit (by each calculator's rule in the registry). Machine votes
always mirror each voter's latest conclusion, so that last condition is the router's own rule applied to the
latest pass: a card a later pass identified leaves the queue. Each card is
shown once, with its newest marker (the newest evidence version it was routed on), oldest routing first.

Copies (cards with the same bytes, an identity group) are one item: the queued copy with the lowest id stands for
its group, with the group's number of copies, because a person's vote on it applies to every copy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from typing import Any

from sqlalchemy import Connection, TextClause, text

from stage_e_dagster.db.arrays import int_array
from stage_e_dagster.domain.calculators import CALCULATORS, SLOW_PATH_ID, TO_REVIEW, Calculator


def machine_hit_sql(registry: Sequence[Calculator] = CALCULATORS) -> tuple[str, dict[str, Any]]:
    """The registry's confident-hit rule over a stored vote `t`, as SQL and its bind values."""
    clauses, params = [], {}
    for index, calc in enumerate(c for c in registry if c.hit_confidence is not None):
        clauses.append(f"(t.anonymous_id = :hit_voter_{index} AND t.confidence >= :hit_confidence_{index})")
        params[f"hit_voter_{index}"] = calc.id
        params[f"hit_confidence_{index}"] = calc.hit_confidence - 1e-9
    return "(" + (" OR ".join(clauses) or "FALSE") + ")", params


_QUEUE = """
WITH latest AS (
    SELECT DISTINCT ON (l.card_id) l.card_id, l.id, l.evidence_key, l.detail, l.created_at
    FROM card_scan_log AS l
    WHERE l.skip_reason = :to_review AND l.anonymous_id = :slow_path
    ORDER BY l.card_id, l.id DESC
), queue AS (
    SELECT latest.*, c.identifier, c.name, c.expansion_hint, c.content_sha256
    FROM latest JOIN card AS c ON c.id = latest.card_id
    WHERE c.printing_status = 'unresolved' AND c.missing_since IS NULL
      AND NOT EXISTS (
        SELECT 1 FROM card_printing_tag AS t
        WHERE t.card_id = c.id AND NOT t.is_no_match AND {machine_hit})
), grouped AS (
    SELECT DISTINCT ON (q.content_sha256) q.*, min(q.id) OVER (PARTITION BY q.content_sha256) AS first_routed
    FROM queue AS q ORDER BY q.content_sha256, q.card_id
)
"""
_LIST = (
    "SELECT g.*, (SELECT count(*) FROM card_printing_tag AS t WHERE t.card_id = g.card_id "
    "AND t.source <> 'ocr') AS human_votes, "
    "(SELECT count(*) FROM card AS o WHERE o.content_sha256 = g.content_sha256) AS copies "
    "FROM grouped AS g ORDER BY g.first_routed, g.card_id LIMIT :limit"
)
_COUNT = "SELECT count(*) FROM grouped"


@lru_cache(maxsize=4)
def _queries(registry: tuple[Calculator, ...]) -> tuple[TextClause, TextClause, dict[str, Any]]:
    """The list and count queries for `registry`'s hit rule, and their bind values."""
    hit, params = machine_hit_sql(registry)
    queue = _QUEUE.format(machine_hit=hit)
    return text(queue + _LIST), text(queue + _COUNT), params


@dataclass(frozen=True)
class ReviewItem:
    """One card awaiting review, with the evidence a reviewer needs and why the machines could not decide."""

    card_id: int
    identifier: str
    name: str
    expansion_hint: str | None
    evidence_key: str | None
    routed_at: datetime
    why: list[str] = field(default_factory=list)
    evidence: dict[str, Any] | None = None
    human_votes: int = 0
    copies: int = 1
    """Cards with the same bytes, this one included (a vote on this card applies to each)."""

    def read(self, key: str) -> Any:
        """A field of the evidence the card was routed on (None without evidence)."""
        return (self.evidence or {}).get(key)


def review_queue(conn: Connection, limit: int = 50, registry: Sequence[Calculator] = CALCULATORS) -> list[ReviewItem]:
    """Up to `limit` queued items (one card per identity group), oldest routing first."""
    listing, _, hit_params = _queries(tuple(registry))
    params = {"to_review": TO_REVIEW, "slow_path": SLOW_PATH_ID, "limit": max(0, limit), **hit_params}
    items = []
    for row in conn.execute(listing, params):
        detail = row.detail or {}
        items.append(ReviewItem(
            card_id=row.card_id, identifier=row.identifier, name=row.name, expansion_hint=row.expansion_hint,
            evidence_key=row.evidence_key, routed_at=row.created_at, why=list(detail.get("why") or []),
            evidence=detail.get("evidence"), human_votes=int(row.human_votes), copies=int(row.copies),
        ))
    return items


def review_queue_size(conn: Connection, registry: Sequence[Calculator] = CALCULATORS) -> int:
    """How many items are in the queue (an identity group counts once)."""
    _, count, hit_params = _queries(tuple(registry))
    return int(conn.execute(count, {"to_review": TO_REVIEW, "slow_path": SLOW_PATH_ID, **hit_params}).scalar_one())


_ROUTED_IN = text(
    "SELECT DISTINCT ON (l.card_id) l.card_id, c.name, c.identifier, l.detail -> 'why' AS why "
    "FROM card_scan_log AS l JOIN card AS c ON c.id = l.card_id "
    "WHERE l.card_id = ANY(CAST(:ids AS bigint[])) AND l.anonymous_id = :slow_path AND l.skip_reason = :to_review "
    "AND c.printing_status = 'unresolved' AND c.missing_since IS NULL ORDER BY l.card_id, l.id DESC LIMIT :limit"
)


@dataclass(frozen=True)
class RoutedCard:
    """A card of a batch that the slow path routed to review and that is still unresolved, with why."""

    card_id: int
    name: str
    identifier: str
    why: list[str]


def routed_among(conn: Connection, card_ids: Sequence[int], limit: int = 10) -> list[RoutedCard]:
    """Up to `limit` of `card_ids` routed to review and still unresolved, by id, each with its latest marker's
    reasons (`<calculator>:<outcome>`). Reads the scan log by card, so its cost follows the batch, not the log."""
    if not card_ids or limit <= 0:
        return []
    params = {"ids": int_array(sorted(set(card_ids))), "slow_path": SLOW_PATH_ID, "to_review": TO_REVIEW,
              "limit": limit}
    rows = conn.execute(_ROUTED_IN, params).all()
    return [RoutedCard(int(r.card_id), r.name, r.identifier, [str(w) for w in (r.why or [])]) for r in rows]
