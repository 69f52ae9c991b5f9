"""`source.synced_at` and `source.synced_listing`: when the last successful sync of a source started, and the
digest of the directory listing it started from.

A sync trusts a file it already knows whose size is unchanged and whose modification and inode-change times are
older than the previous sync's start (less a margin for coarse file-system clocks): such a file is counted unchanged
without being read. So a sync that the `source_inbox` sensor requests for a few new files reads those files, not the
whole directory. NULL (never synced, or the source moved to another directory) reads every file; the daily full
re-sync reads every file whatever this says.

The `source_inbox` sensor compares each directory's listing now with `synced_listing`: a difference (files that
appeared, changed or vanished since the last successful sync) requests a sync, so a sync that failed is requested
again rather than forgotten.

Revision ID: 0009
Revises: 0007
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("source", sa.Column("synced_at", sa.DateTime(timezone=True), nullable=True))
    op.add_column("source", sa.Column("synced_listing", sa.String(64), nullable=True))


def downgrade() -> None:
    op.drop_column("source", "synced_listing")
    op.drop_column("source", "synced_at")
