"""Indexes for the stream sensor's watermark and the envelope's recent-image-loads query.

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_card_updated_at_id", "card", ["updated_at", "id"])
    op.create_index("ix_image_evidence_updated_at", "image_evidence", ["updated_at"])
    op.create_index(
        "ix_scan_log_stage_c_created", "card_scan_log", ["created_at"],
        postgresql_where=sa.text("anonymous_id = 'stage-c-extract-v1'"),
    )


def downgrade() -> None:
    op.drop_index("ix_scan_log_stage_c_created", table_name="card_scan_log")
    op.drop_index("ix_image_evidence_updated_at", table_name="image_evidence")
    op.drop_index("ix_card_updated_at_id", table_name="card")
