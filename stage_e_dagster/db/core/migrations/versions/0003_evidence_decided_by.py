"""`image_evidence.decided_by`: which Stage D calculators have decided on this evidence row.

Stage D sets it after deciding; Stage C clears it whenever it rewrites the row. A card needs Stage D exactly when
its current evidence is not marked by the current calculators, so a crash between Stage C and Stage D, new bytes,
a carried-forward extractor or a calculator version bump all re-open the card.

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("image_evidence", sa.Column("decided_by", sa.Text(), nullable=True))


def downgrade() -> None:
    op.drop_column("image_evidence", "decided_by")
