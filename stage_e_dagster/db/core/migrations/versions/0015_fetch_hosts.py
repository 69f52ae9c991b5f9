"""Remote fetches judged by host: `fetch_host`, and a source's `allow_private`.

`fetch_host` holds each host's fetch health: when it last answered a fetch (`fetch_ok_at`) and the consecutive 403s
since (`forbidden_streak`, with the cards that got them in `forbidden_cards`). A lockout is judged per host, so 403s
scattered over a manifest's hosts never add up to one, and a host that never answered (a hot-linking image host)
never locks a source out. The streak columns of `source` go: the host's row is their one home.

`source.allow_private` lets a manifest's images sit on loopback, private or link-local addresses off the manifest's
own origin (`stage-e sources add --allow-private`); false by default.

Revision ID: 0015
Revises: 0014
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import ARRAY

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "fetch_host",
        sa.Column("host", sa.Text(), primary_key=True),
        sa.Column("fetch_ok_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("forbidden_streak", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("forbidden_cards", ARRAY(sa.BigInteger()), nullable=False,
                  server_default=sa.text("'{}'::bigint[]")),
    )
    op.add_column("source", sa.Column("allow_private", sa.Boolean(), nullable=False, server_default=sa.false()))
    op.drop_column("source", "forbidden_cards")
    op.drop_column("source", "forbidden_streak")


def downgrade() -> None:
    op.add_column("source", sa.Column("forbidden_streak", sa.Integer(), nullable=False, server_default="0"))
    op.add_column("source", sa.Column("forbidden_cards", ARRAY(sa.BigInteger()), nullable=False,
                                      server_default=sa.text("'{}'::bigint[]")))
    op.drop_column("source", "allow_private")
    op.drop_table("fetch_host")
