"""The work rule in SQL: the file that defines it (`rule.sql`), and the fragments other queries build on it.

`rule.sql` defines `card_work_stage` and the triggers that keep `card_work` equal to it; the newest migration that
changes the rule loads it through `work_rule_sql()`. "Current" is what the database's `work_rule` row says
(`db.work.work_rule` keeps it equal to the code's extractor versions and calculators), so the fragments here read
the same row as the function. Fragments expect a card aliased `c` and an `image_evidence` row aliased `e`;
`tests/db/test_work_queue.py` checks each against `card_work_stage`, card by card.
"""

from __future__ import annotations

from pathlib import Path

RULE_FILE = Path(__file__).with_name("rule.sql")


def work_rule_sql() -> str:
    """The current work rule's SQL (functions and triggers), idempotent, for the migration that loads it."""
    return RULE_FILE.read_text(encoding="utf-8")


CURRENT_VERSIONS = "(SELECT current_versions FROM work_rule WHERE id = 1)"
"""The extractor versions evidence must cover to be current (the `work_rule` row)."""

CURRENT_EVIDENCE = (
    "e.card_id = c.id AND e.content_sha256 = c.content_sha256"
    f" AND e.extractor_versions @> {CURRENT_VERSIONS}"
)
"""Evidence `e` is current for card `c`: it is for the card's bytes and covers every current extractor version."""

INELIGIBILITY = "eligibility_reason(c.kind, c.tags, c.language, e.width, e.height, r.min_dpi, r.english_match)"
"""Why no machine may vote on card `c` (`rule.sql`), or NULL; `r` is the `work_rule` row and `e` the card's current
evidence, LEFT JOINed (`ELIGIBILITY_FROM`): the set-based form of `card_ineligibility(c.id)`."""

ELIGIBILITY_FROM = (
    "card AS c CROSS JOIN work_rule AS r LEFT JOIN image_evidence AS e"
    " ON e.card_id = c.id AND e.content_sha256 = c.content_sha256 AND e.extractor_versions @> r.current_versions"
)
"""The join `INELIGIBILITY` reads."""

WORK_STAGE = "card_work_stage(c.id)"
"""The full rule for card `c`: 'C', 'D' or NULL (`rule.sql`), evaluated afresh rather than read from `card_work`."""
