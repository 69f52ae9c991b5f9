"""`image_evidence.card_corners`: where the card lies in the uploaded image.

Eight numbers: the card's four corners as it reads (top-left, top-right, bottom-right, bottom-left), each `x, y`
normalised to the image (0..1), never pixels, so any decode of the same bytes, at any size, can cut the card out.
A scan that already is the card holds the image's own corners; a photo holds where the card finder found the card.
NULL: evidence extracted before the finder ran (its `card` extractor version is missing, so it is stale).

Revision ID: 0017
Revises: 0016
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import ARRAY

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("image_evidence", sa.Column("card_corners", ARRAY(sa.Float()), nullable=True))
    op.create_check_constraint("ck_image_evidence_card_corners", "image_evidence",
                               "card_corners IS NULL OR cardinality(card_corners) = 8")


def downgrade() -> None:
    op.drop_constraint("ck_image_evidence_card_corners", "image_evidence")
    op.drop_column("image_evidence", "card_corners")
