"""`review_claim`: which reviewer has a card open on the review page, until when; an index of unresolved cards.

One row per card at most (the card id is the key). A reviewer claims the card they are shown; another reviewer is
not shown a card whose claim is held by someone else and has not expired, so two people on the same queue never
review the same card at once. Claims expire on their own (a closed browser tab needs no cleanup), and a vote or a
skip releases the claim at once.

`ix_card_unresolved` lets the review page walk the unresolved cards in id order without reading the resolved ones.

Revision ID: 0007
Revises: 0006
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "review_claim",
        sa.Column("card_id", sa.BigInteger(), sa.ForeignKey("card.id", ondelete="CASCADE"), primary_key=True,
                  autoincrement=False),
        sa.Column("reviewer", sa.String(100), nullable=False),
        sa.Column("claimed_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_review_claim_reviewer", "review_claim", ["reviewer"])
    op.create_index("ix_card_unresolved", "card", ["id"],
                    postgresql_where=sa.text("printing_status = 'unresolved' AND missing_since IS NULL"))


def downgrade() -> None:
    op.drop_index("ix_card_unresolved", table_name="card")
    op.drop_index("ix_review_claim_reviewer", table_name="review_claim")
    op.drop_table("review_claim")
