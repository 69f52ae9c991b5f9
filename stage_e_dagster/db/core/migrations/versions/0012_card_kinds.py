"""Each card's kind, language and tags from its source's conventions, the eligibility settings in `work_rule`, and
the work rule that applies them (`db/work/rule.sql`).

`card.kind` (`card`, `token`, `cardback`), `card.language` and `card.tags` are computed at ingest from the card's
source-relative path (`domain.kinds.classify`); existing cards start as plain cards and take their values at the
next full re-sync. `work_rule.min_dpi` and `work_rule.english_match` hold the eligibility settings the rule and
Stage D read (`db.work.work_rule.sync` writes them).

Revision ID: 0012
Revises: 0011
"""

from pathlib import Path

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import ARRAY

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("card", sa.Column("kind", sa.String(16), nullable=False, server_default="card"))
    op.add_column("card", sa.Column("language", sa.String(8), nullable=True))
    op.add_column("card", sa.Column("tags", ARRAY(sa.Text()), nullable=False, server_default=sa.text("'{}'::text[]")))
    op.add_column("work_rule", sa.Column("min_dpi", sa.Integer(), nullable=False, server_default="200"))
    op.add_column("work_rule", sa.Column("english_match", sa.Boolean(), nullable=False,
                                         server_default=sa.text("false")))
    op.execute(Path(__file__).with_name("0012_rule.sql").read_text(encoding="utf-8"))


def downgrade() -> None:
    op.execute("DROP FUNCTION IF EXISTS card_ineligibility(bigint)")
    op.execute("DROP FUNCTION IF EXISTS eligibility_reason(text, text[], text, integer, integer, integer, boolean)")
    op.execute("DROP FUNCTION IF EXISTS log_card_back(bigint)")
    op.execute(Path(__file__).with_name("0011_rule.sql").read_text(encoding="utf-8"))
    op.drop_column("work_rule", "english_match")
    op.drop_column("work_rule", "min_dpi")
    op.drop_column("card", "tags")
    op.drop_column("card", "language")
    op.drop_column("card", "kind")
