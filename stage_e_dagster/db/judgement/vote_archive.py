"""The vote archive (`card_printing_tag_archive`): where every replaced or withdrawn vote goes, and a card's history.

Votes leave `card_printing_tag` only through `archive_votes`, which deletes a (card, voter) group's rows and appends
them to the archive in one statement, inside the caller's transaction: a vote is never lost between the two, and
a rolled-back write archives nothing. The archive is append-only (a trigger refuses UPDATE, DELETE and TRUNCATE).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, text

from stage_e_dagster.db.arrays import int_array, text_array


@dataclass(frozen=True)
class Removal:
    """A voter's stored votes on a card that leave, and why (`domain.voters.ARCHIVE_REASONS`)."""

    card_id: int
    anonymous_id: str
    reason: str
    detail: dict[str, Any] = field(default_factory=dict)


_ARCHIVE = text(
    """
    WITH gone AS (
        DELETE FROM card_printing_tag AS t
        USING unnest(CAST(:cards AS bigint[]), CAST(:voters AS text[]), CAST(:reasons AS text[]),
                     CAST(:details AS text[])) AS g(card_id, anonymous_id, reason, detail)
        WHERE t.card_id = g.card_id AND t.anonymous_id = g.anonymous_id
        RETURNING t.id, t.card_id, t.printing_id, t.is_no_match, t.anonymous_id, t.source, t.confidence, t.run_id,
                  t.applied_from_card_id, t.created_at, g.reason, g.detail
    )
    INSERT INTO card_printing_tag_archive (tag_id, card_id, printing_id, is_no_match, anonymous_id, source,
        confidence, vote_run_id, applied_from_card_id, voted_at, reason, run_id, detail)
    SELECT id, card_id, printing_id, is_no_match, anonymous_id, source, confidence, run_id, applied_from_card_id,
           created_at, reason, :run_id, CAST(detail AS jsonb)
    FROM gone ORDER BY id
    RETURNING id
    """
)


def archive_votes(conn: Connection, removals: Sequence[Removal], run_id: str | None) -> int:
    """Move the removals' stored votes to the archive (one row per vote); returns how many votes moved."""
    unique = {(r.card_id, r.anonymous_id): r for r in removals}
    if not unique:
        return 0
    rows = list(unique.values())
    params = {
        "cards": int_array(r.card_id for r in rows),
        "voters": text_array(r.anonymous_id for r in rows),
        "reasons": text_array(r.reason for r in rows),
        "details": text_array(json.dumps(r.detail, sort_keys=True) for r in rows),
        "run_id": run_id,
    }
    return len(conn.execute(_ARCHIVE, params).all())


@dataclass(frozen=True)
class VoteLine:
    """A vote as a history shows it: who said what, from which run; archived ones also when and why they left."""

    anonymous_id: str
    source: str
    printing: str  # "<set> #<number> (<scryfall id>)" or "no match"
    confidence: float | None
    run_id: str | None
    voted_at: datetime
    applied_from_card_id: int | None = None
    archived_at: datetime | None = None
    reason: str | None = None
    archived_by_run: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CardHistory:
    """A card, its identity group, its current votes and its archived ones (oldest first)."""

    card_id: int
    identifier: str
    name: str
    printing_status: str
    resolved: str | None
    copies: tuple[int, ...]
    current: list[VoteLine]
    archived: list[VoteLine]


_PRINTING = (
    "CASE WHEN {t}.is_no_match THEN 'no match' ELSE "
    "coalesce(p.set_code || ' #' || p.collector_number || ' (' || p.scryfall_id || ')', 'printing ' || {t}.printing_id)"
    " END"
)
_CARD = text(
    "SELECT c.id, c.identifier, c.name, c.printing_status, "
    "p.set_code || ' #' || p.collector_number || ' (' || p.scryfall_id || ')' AS resolved, "
    "ARRAY(SELECT o.id FROM card AS o WHERE o.content_sha256 = c.content_sha256 ORDER BY o.id) AS copies "
    "FROM card AS c LEFT JOIN printing AS p ON p.id = c.resolved_printing_id WHERE c.id = :card"
)
_CURRENT = text(
    f"SELECT t.anonymous_id, t.source, {_PRINTING.format(t='t')} AS printing, t.confidence, t.run_id, "
    "t.created_at AS voted_at, t.applied_from_card_id FROM card_printing_tag AS t "
    "LEFT JOIN printing AS p ON p.id = t.printing_id WHERE t.card_id = :card ORDER BY t.created_at, t.id"
)
_ARCHIVED = text(
    f"SELECT a.anonymous_id, a.source, {_PRINTING.format(t='a')} AS printing, a.confidence, "
    "a.vote_run_id AS run_id, a.voted_at, a.applied_from_card_id, a.archived_at, a.reason, "
    "a.run_id AS archived_by_run, a.detail FROM card_printing_tag_archive AS a "
    "LEFT JOIN printing AS p ON p.id = a.printing_id WHERE a.card_id = :card ORDER BY a.id"
)


def card_history(conn: Connection, card_id: int) -> CardHistory | None:
    """The card's current votes and archived history; None for an unknown card."""
    card = conn.execute(_CARD, {"card": card_id}).first()
    if card is None:
        return None
    current = [VoteLine(**row._mapping) for row in conn.execute(_CURRENT, {"card": card_id})]
    archived = [VoteLine(**row._mapping) for row in conn.execute(_ARCHIVED, {"card": card_id})]
    return CardHistory(card.id, card.identifier, card.name, card.printing_status, card.resolved,
                       tuple(card.copies), current, archived)
