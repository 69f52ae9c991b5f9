"""The SQL form of the work rules in `domain/work.py`, written once for every query that needs them.

"Current" is what the database's `work_rule` row says (`db.work.work_rule` keeps it equal to the code's extractor
versions and calculators), so the fragments here, the `card_work_stage` function and the `card_work` triggers all
read one definition. Fragments expect a card aliased `c` and an `image_evidence` row aliased `e`.
"""

from __future__ import annotations

CURRENT_EVIDENCE = (
    "e.card_id = c.id AND e.content_sha256 = c.content_sha256"
    " AND e.extractor_versions @> (SELECT current_versions FROM work_rule WHERE id = 1)"
)
"""Evidence `e` is current for card `c`: it is for the card's bytes and covers every current extractor version."""

WORK_STAGE = "card_work_stage(c.id)"
"""The full rule for card `c`: 'C', 'D' or NULL (migration 0005), evaluated afresh rather than read from
`card_work`."""
