"""Remote sources: S3-compatible buckets and HTTP manifests, whose cards' bytes are known only once fetched.

`source` gains what a remote source needs: `endpoint`, `region` and `credentials` (the *name* of a credential set;
the secrets live in the environment, never here), the listing position of a pass under way (`list_cursor`, with
`list_started_at`), the manifest's validator (`list_token`, its ETag or Last-Modified), and the source's fetch
health (`fetch_ok_at`: when it last answered a fetch; `forbidden_streak` / `forbidden_cards`: the consecutive 403s
since, which judge a lockout).

`card` gains the store's change token (`remote_token`: ETag, size and last-modified for S3, the URL and declared
hash for a manifest entry), the address of a manifest entry (`remote_url`), whether `content_sha256` was computed
from the bytes (`content_verified`; false for a card never fetched, whose `content_sha256` is NULL or the
manifest's declared hash, a provisional identity), the final fetch skip of this version (`fetch_failed`) and how
many broken fetches it had (`fetch_attempts`). `content_sha256` and `size_bytes` become nullable for that reason.
A partial index keeps remote cards in byte order per source, for the listing's merge with the stored cards.

`fetch_pace` is the fleet-wide fetch limiter: one row every fetching process takes its turn from (a GCRA: the
theoretical arrival time `tat` moves by one interval per fetch), with the shared pace factor that throttling halves
and clean responses restore.

The work rule (`db/work/rule.sql`) changes: a card whose fetch failed for good needs no work, and a new change token
resets a card's work like new bytes do. This revision loads the file; 0011 and 0012 keep
frozen copies of the texts they loaded.

Revision ID: 0013
Revises: 0012
"""

from pathlib import Path

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import ARRAY

from stage_e_dagster.db.work.predicates import work_rule_sql

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    for name, column_type in (("endpoint", sa.Text()), ("region", sa.Text()), ("credentials", sa.Text()),
                              ("list_cursor", sa.Text()), ("list_started_at", sa.DateTime(timezone=True)),
                              ("list_token", sa.Text()), ("fetch_ok_at", sa.DateTime(timezone=True))):
        op.add_column("source", sa.Column(name, column_type, nullable=True))
    op.add_column("source", sa.Column("forbidden_streak", sa.Integer(), nullable=False, server_default="0"))
    op.add_column("source", sa.Column("forbidden_cards", ARRAY(sa.BigInteger()), nullable=False,
                                      server_default=sa.text("'{}'::bigint[]")))

    op.alter_column("card", "content_sha256", nullable=True)
    op.alter_column("card", "size_bytes", nullable=True)
    op.add_column("card", sa.Column("remote_token", sa.Text(), nullable=True))
    op.add_column("card", sa.Column("remote_url", sa.Text(), nullable=True))
    op.add_column("card", sa.Column("content_verified", sa.Boolean(), nullable=False, server_default=sa.true()))
    op.add_column("card", sa.Column("fetch_failed", sa.String(32), nullable=True))
    op.add_column("card", sa.Column("fetch_attempts", sa.SmallInteger(), nullable=False, server_default="0"))
    op.execute('CREATE INDEX ix_card_remote_order ON card (source_id, identifier COLLATE "C") '
               "WHERE remote_token IS NOT NULL")

    op.create_table(
        "fetch_pace",
        sa.Column("id", sa.SmallInteger(), primary_key=True, server_default=sa.text("1")),
        sa.Column("tat", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
        sa.Column("factor", sa.Float(), nullable=False, server_default=sa.text("1")),
        sa.Column("generation", sa.BigInteger(), nullable=False, server_default=sa.text("0")),
        sa.Column("clean_streak", sa.Integer(), nullable=False, server_default=sa.text("0")),
        sa.Column("halvings", sa.BigInteger(), nullable=False, server_default=sa.text("0")),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
        sa.CheckConstraint("id = 1", name="ck_fetch_pace_single_row"),
        sa.CheckConstraint("factor > 0 AND factor <= 1", name="ck_fetch_pace_factor"),
    )
    op.execute("INSERT INTO fetch_pace (id) VALUES (1)")
    op.execute(work_rule_sql())


def downgrade() -> None:
    op.execute(Path(__file__).with_name("0012_rule.sql").read_text(encoding="utf-8"))
    op.drop_table("fetch_pace")
    op.execute("DROP INDEX IF EXISTS ix_card_remote_order")
    op.execute("DELETE FROM card WHERE content_sha256 IS NULL OR size_bytes IS NULL")
    for name in ("fetch_attempts", "fetch_failed", "content_verified", "remote_url", "remote_token"):
        op.drop_column("card", name)
    op.alter_column("card", "size_bytes", nullable=False)
    op.alter_column("card", "content_sha256", nullable=False)
    for name in ("forbidden_cards", "forbidden_streak", "fetch_ok_at", "list_token", "list_started_at",
                 "list_cursor", "credentials", "region", "endpoint"):
        op.drop_column("source", name)
