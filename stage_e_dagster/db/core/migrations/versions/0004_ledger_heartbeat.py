"""`dispatch_ledger.heartbeat_at` and `owner`: a `running` row proves it is alive.

A batch touches its row at every stage boundary and while Stage C works, and names the process running it
(`<host id>/<pid>/<start time>`). The reaper closes a `running` row as `failed` when its heartbeat is older than the
reclaim age, when its Dagster run has ended, or at once when its process on this host is gone, so a killed run
never hides its cards behind a row that says `running` forever.

Revision ID: 0004
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("dispatch_ledger", sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=True))
    op.execute("UPDATE dispatch_ledger SET heartbeat_at = COALESCE(finished_at, started_at)")
    op.alter_column("dispatch_ledger", "heartbeat_at", nullable=False, server_default=sa.text("now()"))
    op.add_column("dispatch_ledger", sa.Column("owner", sa.Text(), nullable=True))
    op.create_index("ix_ledger_running_heartbeat", "dispatch_ledger", ["heartbeat_at"],
                    postgresql_where=sa.text("status = 'running'"))


def downgrade() -> None:
    op.drop_index("ix_ledger_running_heartbeat", table_name="dispatch_ledger")
    op.drop_column("dispatch_ledger", "owner")
    op.drop_column("dispatch_ledger", "heartbeat_at")
