"""`image_evidence.collector_end_height`: how tall the glyph before a legal line's slash stands, as its pixels show.

Letter-suffix twins ("30a" and "30b" of one set, or "24" and "24a") share set, total and year; a lower-case "a"
stands at x-height, a "b" or a digit at full height, and OCR reads a small blurred letter as any other
(`domain.evidence.star_mark.end_height`). NULL: the pixels could not tell, the name has no such twin, or the
evidence predates the check (the collector extractor's new version owes every card a new reading).

Revision ID: 0019
Revises: 0018
"""

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("image_evidence", sa.Column("collector_end_height", sa.String(16), nullable=True))


def downgrade() -> None:
    op.drop_column("image_evidence", "collector_end_height")
