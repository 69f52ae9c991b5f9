"""Re-open cards for Stage D when the catalogue changes under them (the rule is `domain/work.py`).

Re-opening clears `decided_by` on a card's current evidence, which is exactly what makes a card need Stage D
without needing Stage C (the `card_work` triggers put it in the work queue in the same transaction). It runs in the
transaction that changed the catalogue, after locking the cards in id order like every Stage D writer: a Stage D
pass that read the old catalogue either committed before (and is re-opened here) or starts after and reads the
new one.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from sqlalchemy import Connection, text

from stage_e_dagster.db.arrays import int_array, text_array
from stage_e_dagster.db.core.transactions import lock_cards
from stage_e_dagster.db.work.predicates import CURRENT_EVIDENCE
from stage_e_dagster.domain.calculators import CALCULATORS, Calculator, machine_voters
from stage_e_dagster.domain.calculators.registry import ALWAYS
from stage_e_dagster.domain.work import LACK_OF_PRINTING

_BY_NAME = text("SELECT id FROM card WHERE name_normalised = ANY(CAST(:names AS text[]))")
_LACKING = text(
    """
    SELECT DISTINCT l.card_id FROM card_scan_log AS l
    WHERE l.skip_reason = ANY(CAST(:lack AS text[])) AND l.anonymous_id = ANY(CAST(:voters AS text[]))
      AND NOT EXISTS (SELECT 1 FROM card_scan_log AS n
                      WHERE n.card_id = l.card_id AND n.anonymous_id = l.anonymous_id AND n.id > l.id)
      AND NOT EXISTS (SELECT 1 FROM card_printing_tag AS t
                      WHERE t.card_id = l.card_id AND t.anonymous_id = l.anonymous_id)
    """
)
_REOPEN = text(
    f"UPDATE image_evidence AS e SET decided_by = NULL FROM card AS c WHERE {CURRENT_EVIDENCE} "
    "AND c.id = ANY(CAST(:ids AS bigint[])) AND e.decided_by IS NOT NULL RETURNING e.card_id"
)


def cards_to_reopen(conn: Connection, names: Collection[str], lacking: bool,
                    registry: Sequence[Calculator] = CALCULATORS) -> set[int]:
    """Cards whose candidate set a catalogue change touched: named `names`, and (when `lacking`) those where a
    calculator's latest word is an abstention for lack of a printing.

    Only calculators that run on every pass are asked: an unchanged abstention is not logged again and a vote is
    not logged at all, so their latest log row is their latest word unless they have a vote stored. (A calculator
    that runs only until a hit leaves no trace when it did not run, so its last log row may be stale.)
    """
    found: set[int] = set()
    if names:
        found.update(conn.execute(_BY_NAME, {"names": text_array(sorted(names))}).scalars())
    always = [calc for calc in registry if calc.runs == ALWAYS]
    if lacking and always:
        params = {"lack": text_array(LACK_OF_PRINTING), "voters": text_array(machine_voters(always))}
        found.update(conn.execute(_LACKING, params).scalars())
    return found


def reopen_for_stage_d(conn: Connection, card_ids: Collection[int]) -> set[int]:
    """Lock the cards and clear the Stage D mark of their current evidence; returns the cards re-opened (those
    that had been decided: a card still owed Stage D or Stage C needs nothing here)."""
    ids = sorted(lock_cards(conn, card_ids))
    if not ids:
        return set()
    return set(conn.execute(_REOPEN, {"ids": int_array(ids)}).scalars())
