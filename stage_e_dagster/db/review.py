"""The human review queue: cards the slow path routed `to-review` that still need a person.

A card is in the queue when it has a `to-review` marker, is still `unresolved`, is not missing from its source,
and its stored machine votes show no confident hit (no join-key printing vote of confidence >= 0.8 and no
fallback printing vote). Machine votes always mirror each voter's latest conclusion, so that last condition is
the router's own rule applied to the latest pass: a card a later pass identified leaves the queue. Each card is
shown once, with its newest marker (the newest evidence version it was routed on), oldest routing first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, text

from stage_e_dagster.domain.calculators import FALLBACK_ID, JOIN_KEY_ID, SLOW_PATH_ID, TO_REVIEW
from stage_e_dagster.domain.calculators.fallback import CONFIDENT_HIT

_QUEUE = """
WITH latest AS (
    SELECT DISTINCT ON (l.card_id) l.card_id, l.id, l.evidence_key, l.detail, l.created_at
    FROM card_scan_log AS l
    WHERE l.skip_reason = :to_review AND l.anonymous_id = :slow_path
    ORDER BY l.card_id, l.id DESC
), queue AS (
    SELECT latest.*, c.identifier, c.name, c.expansion_hint
    FROM latest JOIN card AS c ON c.id = latest.card_id
    WHERE c.printing_status = 'unresolved' AND c.missing_since IS NULL
      AND NOT EXISTS (
        SELECT 1 FROM card_printing_tag AS t
        WHERE t.card_id = c.id AND NOT t.is_no_match
          AND ((t.anonymous_id = :join_key AND t.confidence >= :confident) OR t.anonymous_id = :fallback))
)
"""
_LIST = text(
    _QUEUE + "SELECT q.*, (SELECT count(*) FROM card_printing_tag AS t WHERE t.card_id = q.card_id "
    "AND t.source <> 'ocr') AS human_votes FROM queue AS q ORDER BY q.id LIMIT :limit"
)
_COUNT = text(_QUEUE + "SELECT count(*) FROM queue")


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

    def read(self, key: str) -> Any:
        """A field of the evidence the card was routed on (None without evidence)."""
        return (self.evidence or {}).get(key)


def _params(limit: int | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"to_review": TO_REVIEW, "slow_path": SLOW_PATH_ID, "join_key": JOIN_KEY_ID,
                              "fallback": FALLBACK_ID, "confident": CONFIDENT_HIT - 1e-9}
    if limit is not None:
        params["limit"] = limit
    return params


def review_queue(conn: Connection, limit: int = 50) -> list[ReviewItem]:
    """Up to `limit` queued cards, oldest routing first."""
    items = []
    for row in conn.execute(_LIST, _params(max(0, limit))):
        detail = row.detail or {}
        items.append(ReviewItem(
            card_id=row.card_id, identifier=row.identifier, name=row.name, expansion_hint=row.expansion_hint,
            evidence_key=row.evidence_key, routed_at=row.created_at, why=list(detail.get("why") or []),
            evidence=detail.get("evidence"), human_votes=int(row.human_votes),
        ))
    return items


def review_queue_size(conn: Connection) -> int:
    """How many cards are in the queue."""
    return int(conn.execute(_COUNT, _params()).scalar_one())
