"""The work rule from its one file: `card_work_stage`, `refresh_card_work` and the `card_work` triggers, loaded from
`db/work/rule.sql`.

This revision defined the rule exactly as revision 0005 did. A later revision changed the rule and loads the file
in its turn, so this one loads a frozen copy of the text it loaded (`db/work/rule_0011.sql`), and a fresh upgrade
replays every version in order.

Revision ID: 0011
Revises: 0010
"""

from pathlib import Path

from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

RULE_FILE = Path(__file__).parents[3] / "work" / "rule_0011.sql"
"""`db/work/rule.sql` as this revision loaded it, frozen."""


def upgrade() -> None:
    op.execute(RULE_FILE.read_text(encoding="utf-8"))


def downgrade() -> None:
    # Revision 0005's definition is the same rule: nothing to restore.
    pass
