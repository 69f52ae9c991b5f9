"""Initial schema: every table in DESIGN.md with its constraints and the indexes the stream queries use.

Revision ID: 0001
Revises:
Create Date: 2026-11-29 15:46:48.058330
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "dispatch_ledger",
        sa.Column("run_id", sa.String(length=64), nullable=False),
        sa.Column("trigger", sa.String(length=32), nullable=False),
        sa.Column("mode", sa.String(length=16), nullable=False),
        sa.Column("card_ids", postgresql.ARRAY(sa.BigInteger()), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column(
            "counters", postgresql.JSONB(astext_type=sa.Text()), server_default=sa.text("'{}'::jsonb"), nullable=False
        ),
        sa.Column("failure_reason", sa.Text(), nullable=True),
        sa.Column("started_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint(
            "status IN ('running', 'completed', 'throttled', 'halted', 'failed')", name="ck_ledger_status"
        ),
        sa.PrimaryKeyConstraint("run_id"),
    )
    op.create_index(
        "ix_ledger_running_cards",
        "dispatch_ledger",
        ["card_ids"],
        unique=False,
        postgresql_using="gin",
        postgresql_where=sa.text("status = 'running'"),
    )
    op.create_index("ix_ledger_status", "dispatch_ledger", ["status"], unique=False)
    op.create_table(
        "envelope_trip",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("bar", sa.String(length=32), nullable=False),
        sa.Column("observed", sa.Float(), nullable=True),
        sa.Column("ceiling", sa.Float(), nullable=True),
        sa.Column(
            "detail", postgresql.JSONB(astext_type=sa.Text()), server_default=sa.text("'{}'::jsonb"), nullable=False
        ),
        sa.Column("run_id", sa.String(length=64), nullable=True),
        sa.Column("tripped_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("acknowledged_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("acknowledged_note", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("run_id"),
    )
    op.create_index(
        "ix_trip_open",
        "envelope_trip",
        ["tripped_at"],
        unique=False,
        postgresql_where=sa.text("acknowledged_at IS NULL"),
    )
    op.create_table(
        "expansion",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("code", sa.String(length=8), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("released_at", sa.Date(), nullable=True),
        sa.Column("symbol_phash", sa.BigInteger(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("code"),
    )
    op.create_table(
        "printing",
        sa.Column("id", sa.BigInteger(), nullable=False),
        sa.Column("scryfall_id", sa.String(length=36), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("name_normalised", sa.Text(), nullable=False),
        sa.Column("set_code", sa.String(length=8), nullable=False),
        sa.Column("collector_number", sa.String(length=16), nullable=False),
        sa.Column("lang", sa.String(length=8), nullable=True),
        sa.Column("released_at", sa.Date(), nullable=True),
        sa.Column("rarity", sa.String(length=16), nullable=True),
        sa.Column("artist", sa.Text(), nullable=True),
        sa.Column("border_color", sa.String(length=16), nullable=True),
        sa.Column("frame", sa.String(length=16), nullable=True),
        sa.Column("layout", sa.String(length=32), nullable=True),
        sa.Column("face_names", postgresql.ARRAY(sa.Text()), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("scryfall_id"),
    )
    op.create_index("ix_printing_name_normalised", "printing", ["name_normalised"], unique=False)
    op.create_index("ix_printing_set_number", "printing", ["set_code", "collector_number"], unique=False)
    op.create_table(
        "source",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("key", sa.String(length=200), nullable=False),
        sa.Column("kind", sa.String(length=32), server_default="directory", nullable=False),
        sa.Column("location", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("key"),
    )
    op.create_table(
        "sweep_cursor",
        sa.Column("name", sa.String(length=32), nullable=False),
        sa.Column("position", sa.BigInteger(), server_default=sa.text("0"), nullable=False),
        sa.Column("wrap_count", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.PrimaryKeyConstraint("name"),
    )
    op.create_table(
        "card",
        sa.Column("id", sa.BigInteger(), nullable=False),
        sa.Column("source_id", sa.Integer(), nullable=False),
        sa.Column("identifier", sa.Text(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("name_normalised", sa.Text(), nullable=False),
        sa.Column("expansion_hint", sa.String(length=8), nullable=True),
        sa.Column("content_sha256", sa.String(length=64), nullable=False),
        sa.Column("content_phash", sa.BigInteger(), nullable=True),
        sa.Column("size_bytes", sa.BigInteger(), nullable=False),
        sa.Column("printing_status", sa.String(length=16), server_default="unresolved", nullable=False),
        sa.Column("resolved_printing_id", sa.BigInteger(), nullable=True),
        sa.Column("missing_since", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.CheckConstraint("printing_status IN ('unresolved', 'resolved', 'no_match')", name="ck_card_printing_status"),
        sa.ForeignKeyConstraint(["resolved_printing_id"], ["printing.id"], ondelete="SET NULL"),
        sa.ForeignKeyConstraint(["source_id"], ["source.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("source_id", "identifier", name="uq_card_source_identifier"),
    )
    op.create_index("ix_card_name_normalised", "card", ["name_normalised"], unique=False)
    op.create_table(
        "card_printing_tag",
        sa.Column("id", sa.BigInteger(), nullable=False),
        sa.Column("card_id", sa.BigInteger(), nullable=False),
        sa.Column("printing_id", sa.BigInteger(), nullable=True),
        sa.Column("is_no_match", sa.Boolean(), server_default=sa.text("false"), nullable=False),
        sa.Column("anonymous_id", sa.String(length=100), nullable=False),
        sa.Column("source", sa.String(length=16), nullable=False),
        sa.Column("confidence", sa.Float(), nullable=True),
        sa.Column("run_id", sa.String(length=64), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.CheckConstraint("source IN ('ocr', 'user', 'admin')", name="ck_tag_source"),
        sa.CheckConstraint("(printing_id IS NOT NULL) <> is_no_match", name="ck_tag_printing_xor_no_match"),
        sa.ForeignKeyConstraint(["card_id"], ["card.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["printing_id"], ["printing.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_tag_card_voter", "card_printing_tag", ["card_id", "anonymous_id"], unique=False)
    op.create_index(
        "uq_tag_card_printing_voter",
        "card_printing_tag",
        ["card_id", "printing_id", "anonymous_id"],
        unique=True,
        postgresql_where=sa.text("NOT is_no_match"),
    )
    op.create_index(
        "uq_tag_card_voter_no_match",
        "card_printing_tag",
        ["card_id", "anonymous_id"],
        unique=True,
        postgresql_where=sa.text("is_no_match"),
    )
    op.create_table(
        "card_scan_log",
        sa.Column("id", sa.BigInteger(), nullable=False),
        sa.Column("card_id", sa.BigInteger(), nullable=False),
        sa.Column("anonymous_id", sa.String(length=100), nullable=False),
        sa.Column("skip_reason", sa.String(length=64), nullable=False),
        sa.Column("evidence_key", sa.Text(), nullable=True),
        sa.Column("run_id", sa.String(length=64), nullable=True),
        sa.Column(
            "detail", postgresql.JSONB(astext_type=sa.Text()), server_default=sa.text("'{}'::jsonb"), nullable=False
        ),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(["card_id"], ["card.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_scan_log_card_voter", "card_scan_log", ["card_id", "anonymous_id"], unique=False)
    op.create_index(
        "uq_scan_log_review_once",
        "card_scan_log",
        ["card_id", "anonymous_id", "evidence_key"],
        unique=True,
        postgresql_where=sa.text("skip_reason = 'to-review'"),
    )
    op.create_table(
        "image_evidence",
        sa.Column("id", sa.BigInteger(), nullable=False),
        sa.Column("card_id", sa.BigInteger(), nullable=False),
        sa.Column("content_sha256", sa.String(length=64), nullable=False),
        sa.Column(
            "extractor_versions",
            postgresql.JSONB(astext_type=sa.Text()),
            server_default=sa.text("'{}'::jsonb"),
            nullable=False,
        ),
        sa.Column("width", sa.Integer(), nullable=True),
        sa.Column("height", sa.Integer(), nullable=True),
        sa.Column("aspect_ratio", sa.Float(), nullable=True),
        sa.Column("bleed_class", sa.String(length=16), nullable=True),
        sa.Column("border_color", sa.String(length=16), nullable=True),
        sa.Column("collector_raw", sa.Text(), nullable=True),
        sa.Column("collector_number", sa.String(length=16), nullable=True),
        sa.Column("set_code_raw", sa.String(length=16), nullable=True),
        sa.Column("set_code", sa.String(length=16), nullable=True),
        sa.Column("language", sa.String(length=8), nullable=True),
        sa.Column("legal_raw", sa.Text(), nullable=True),
        sa.Column("copyright_year", sa.Integer(), nullable=True),
        sa.Column("proxy_marker", sa.Boolean(), nullable=True),
        sa.Column("art_phash", sa.BigInteger(), nullable=True),
        sa.Column("symbol_phash", sa.BigInteger(), nullable=True),
        sa.Column("truncated", sa.Boolean(), server_default=sa.text("false"), nullable=False),
        sa.Column("blur_variance", sa.Float(), nullable=True),
        sa.Column("entropy", sa.Float(), nullable=True),
        sa.Column("run_id", sa.String(length=64), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(["card_id"], ["card.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("card_id", "content_sha256", name="uq_image_evidence_card_sha"),
    )


def downgrade() -> None:
    op.drop_table("image_evidence")
    op.drop_index(
        "uq_scan_log_review_once", table_name="card_scan_log", postgresql_where=sa.text("skip_reason = 'to-review'")
    )
    op.drop_index("ix_scan_log_card_voter", table_name="card_scan_log")
    op.drop_table("card_scan_log")
    op.drop_index("uq_tag_card_voter_no_match", table_name="card_printing_tag", postgresql_where=sa.text("is_no_match"))
    op.drop_index(
        "uq_tag_card_printing_voter", table_name="card_printing_tag", postgresql_where=sa.text("NOT is_no_match")
    )
    op.drop_index("ix_tag_card_voter", table_name="card_printing_tag")
    op.drop_table("card_printing_tag")
    op.drop_index("ix_card_name_normalised", table_name="card")
    op.drop_table("card")
    op.drop_table("sweep_cursor")
    op.drop_table("source")
    op.drop_index("ix_printing_set_number", table_name="printing")
    op.drop_index("ix_printing_name_normalised", table_name="printing")
    op.drop_table("printing")
    op.drop_table("expansion")
    op.drop_index("ix_trip_open", table_name="envelope_trip", postgresql_where=sa.text("acknowledged_at IS NULL"))
    op.drop_table("envelope_trip")
    op.drop_index("ix_ledger_status", table_name="dispatch_ledger")
    op.drop_index(
        "ix_ledger_running_cards",
        table_name="dispatch_ledger",
        postgresql_using="gin",
        postgresql_where=sa.text("status = 'running'"),
    )
    op.drop_table("dispatch_ledger")
