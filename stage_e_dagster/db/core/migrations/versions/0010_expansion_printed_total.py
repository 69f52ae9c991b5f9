"""`expansion.printed_total`: the set's printed size, the number after the slash of its collector lines ("42/280").

Scryfall's card objects do not carry it; its set objects do (`printed_size`), and `stage-e catalog import --sets`
stores it. The collector reader uses it to confirm a reading's total, and a codeless reading ("42/280" above an
artist credit) whose total matches is settled without reading the legal line. NULL: unknown.

Revision ID: 0010
Revises: 0009
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("expansion", sa.Column("printed_total", sa.Integer(), nullable=True))


def downgrade() -> None:
    op.drop_column("expansion", "printed_total")
