"""The work rule from its one file: `card_work_stage`, `refresh_card_work` and the `card_work` triggers, loaded from
`db/work/rule.sql`.

This revision defines the rule exactly as revision 0005 did; from here on the rule has one home, the file. A later
revision that changes the rule loads the file in its turn, and this one then keeps a frozen copy of the text it
loaded (pasted in place of the call), so a fresh upgrade replays every version in order.

Revision ID: 0011
Revises: 0010
"""

from pathlib import Path

from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


FROZEN_RULE = Path(__file__).with_name("0011_rule.sql")
"""The rule's text as this revision loaded it (a frozen copy of `db/work/rule.sql` at the time)."""


def upgrade() -> None:
    op.execute(FROZEN_RULE.read_text(encoding="utf-8"))


def downgrade() -> None:
    # Revision 0005's definition is the same rule: nothing to restore.
    pass
