"""`image_evidence.collector_star`: whether a legal line's number carries a star, as its pixels show.

Premium printings of the 1997 and 2003 frames ("123★/350") share set, total and year with their unstarred twin;
the star glyph before the slash is the one thing that tells them apart, and OCR is no witness for it
(`domain.evidence.star_mark`). NULL: the pixels could not tell, or the evidence predates the check (the collector
extractor's new version owes every card a new reading).

Revision ID: 0018
Revises: 0017
"""

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("image_evidence", sa.Column("collector_star", sa.Boolean(), nullable=True))


def downgrade() -> None:
    op.drop_column("image_evidence", "collector_star")
