"""What "current" means in the database, and keeping `card_work` true to it.

`work_rule` holds the code's extractor versions, Stage D's `decided_by` mark, Stage C's voter id and the eligibility
settings (`STAGE_E_MIN_DPI`, `STAGE_E_MATCH_FOREIGN_TO_ENGLISH`, applied at `stage-e db upgrade`); the SQL
function `card_work_stage` (`rule.sql`) reads it, and triggers keep `card_work` equal to that function for every
card as rows change. When a deploy changes the rule (an extractor or calculator version bump), `sync` writes the new
rule and recomputes every card in id chunks; the position is stored, so a recompute cut short resumes where it
stopped. `reconcile` re-checks one id range against the rule and mends any drift, for the backstop sweep.

`sync` takes an engine because it commits chunk by chunk while holding a session lock on one connection of its own
(`db.core.migrate.upgrade` hands it its one-off NullPool engine); the other functions take the caller's connection.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import Connection, Engine, text

from stage_e_dagster.domain.evidence.versions import EXTRACTOR_VERSIONS
from stage_e_dagster.domain.kinds import DEFAULT_MIN_DPI
from stage_e_dagster.domain.work import STAGE_C_ID, decided_by

logger = logging.getLogger(__name__)

CHUNK = 50_000
_SYNC_LOCK_KEY = 0x5E_DB_00_02


@dataclass(frozen=True)
class Rule:
    current_versions: dict[str, str]
    decided_by: str
    stage_c_id: str
    min_dpi: int = DEFAULT_MIN_DPI
    english_match: bool = False


def code_rule(min_dpi: int = DEFAULT_MIN_DPI, english_match: bool = False) -> Rule:
    """The rule of the code running now under these eligibility settings (`STAGE_E_MIN_DPI`,
    `STAGE_E_MATCH_FOREIGN_TO_ENGLISH`); they are part of Stage D's `decided_by` mark, so changing one re-opens
    every card for Stage D."""
    return Rule(dict(EXTRACTOR_VERSIONS), decided_by(min_dpi=min_dpi, english_match=english_match), STAGE_C_ID,
                min_dpi, english_match)


CODE_RULE = code_rule()
"""The rule of the code running now, under the default eligibility settings."""

_RECOMPUTE = text(
    """
    WITH wanted AS (
        SELECT id, card_work_stage(id) AS stage FROM card WHERE id > :low AND id <= :high
    ), dropped AS (
        DELETE FROM card_work w USING wanted WHERE w.card_id = wanted.id AND wanted.stage IS NULL RETURNING 1
    ), kept AS (
        INSERT INTO card_work (card_id, stage) SELECT id, stage FROM wanted WHERE stage IS NOT NULL
        ON CONFLICT (card_id) DO UPDATE SET stage = EXCLUDED.stage WHERE card_work.stage IS DISTINCT FROM EXCLUDED.stage
        RETURNING 1
    )
    SELECT (SELECT count(*) FROM dropped) + (SELECT count(*) FROM kept)
    """
)


def stored_rule(conn: Connection) -> tuple[Rule, int | None]:
    """The rule in the database and how far its recompute got (None: complete)."""
    row = conn.execute(text(
        "SELECT current_versions, decided_by, stage_c_id, min_dpi, english_match, recomputed_through "
        "FROM work_rule WHERE id = 1")).one()
    rule = Rule(dict(row.current_versions), row.decided_by, row.stage_c_id, row.min_dpi, row.english_match)
    return rule, row.recomputed_through


def eligibility(conn: Connection) -> tuple[int, bool]:
    """The eligibility settings the database's rule applies: (min_dpi, english_match)."""
    row = conn.execute(text("SELECT min_dpi, english_match FROM work_rule WHERE id = 1")).one()
    return int(row.min_dpi), bool(row.english_match)


def is_current(conn: Connection, rule: Rule = CODE_RULE) -> bool:
    """Whether the database holds `rule` with its recompute complete."""
    stored, position = stored_rule(conn)
    return stored == rule and position is None


def recompute_range(conn: Connection, low: int, high: int) -> int:
    """Set `card_work` for the cards with ids in (low, high] from the rule; how many rows changed."""
    return int(conn.execute(_RECOMPUTE, {"low": low, "high": high}).scalar_one())


def sync(engine: Engine, rule: Rule = CODE_RULE, chunk: int = CHUNK,
         progress: Callable[[int, int], None] = lambda done, total: None) -> int:
    """Make the database hold `rule` and every card's work match it; how many `card_work` rows changed.

    Concurrent callers queue on an advisory lock (held by one connection of `engine` for the whole sync); the later
    ones find the work done. Each chunk commits with the position reached, so a recompute cut short resumes there.
    """
    changed = 0
    with engine.connect() as conn:
        conn.execute(text("SELECT pg_advisory_lock(:key)"), {"key": _SYNC_LOCK_KEY})
        conn.commit()
        try:
            stored, position = stored_rule(conn)
            if stored != rule:
                conn.execute(
                    text("UPDATE work_rule SET current_versions = CAST(:versions AS jsonb), decided_by = :decided, "
                         "stage_c_id = :stage_c, min_dpi = :min_dpi, english_match = :english_match, "
                         "recomputed_through = 0, updated_at = now() WHERE id = 1"),
                    {"versions": json.dumps(rule.current_versions), "decided": rule.decided_by,
                     "stage_c": rule.stage_c_id, "min_dpi": rule.min_dpi, "english_match": rule.english_match},
                )
                position = 0
                logger.warning("work rules changed (extractor versions, calculators or eligibility settings): "
                               "recomputing every card")
            top = int(conn.execute(text("SELECT coalesce(max(id), 0) FROM card")).scalar_one())
            conn.commit()
            if position is None:
                return 0
            while position < top:
                high = position + chunk
                changed += recompute_range(conn, position, high)
                conn.execute(text("UPDATE work_rule SET recomputed_through = :high WHERE id = 1"), {"high": high})
                conn.commit()
                position = high
                progress(min(position, top), top)
            conn.execute(text("UPDATE work_rule SET recomputed_through = NULL WHERE id = 1"))
            conn.commit()
            return changed
        finally:
            conn.rollback()
            conn.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": _SYNC_LOCK_KEY})
            conn.commit()


def reconcile(conn: Connection, low: int, high: int) -> int:
    """Re-check the cards with ids in (low, high] against the rule and mend `card_work` in the caller's transaction;
    rows mended (should be 0: anything else is drift worth a log line)."""
    return recompute_range(conn, low, high)
