"""`image_evidence.collector_total` and `collector_layout`: what the collector reader read besides the number.

The printed total ("/274") is what narrows the set of a number read from a frame that prints no set code, and the
layout (where on the card the number stood: `domain.printed_lines`) which printings a reading may stand for; Stage D
needs both to tell a whole number from a piece of one. Existing rows keep NULL: the collector extractor's new
version owes every card a new reading.

Revision ID: 0016
Revises: 0015
"""

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("image_evidence", sa.Column("collector_total", sa.Integer(), nullable=True))
    op.add_column("image_evidence", sa.Column("collector_layout", sa.String(16), nullable=True))


def downgrade() -> None:
    op.drop_column("image_evidence", "collector_layout")
    op.drop_column("image_evidence", "collector_total")
