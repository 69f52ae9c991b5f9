"""The tables of judgement: Stage C's evidence, the votes, the votes' archive and the scan log."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB
from sqlalchemy.orm import Mapped, mapped_column

from stage_e_dagster.db.core.models.base import EMPTY_JSON, Base, created
from stage_e_dagster.domain.voters import ARCHIVE_REASONS


class ImageEvidence(Base):
    """Stage C output for one version of a card's bytes."""

    __tablename__ = "image_evidence"
    __table_args__ = (
        UniqueConstraint("card_id", "content_sha256", name="uq_image_evidence_card_sha"),
        Index("ix_image_evidence_updated_at", "updated_at"),
        Index("ix_image_evidence_content_sha256", "content_sha256"),
        CheckConstraint("card_corners IS NULL OR cardinality(card_corners) = 8", name="ck_image_evidence_card_corners"),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    card_id: Mapped[int] = mapped_column(ForeignKey("card.id", ondelete="CASCADE"))
    content_sha256: Mapped[str] = mapped_column(String(64))
    extractor_versions: Mapped[dict[str, str]] = mapped_column(JSONB, default=dict, server_default=EMPTY_JSON)
    width: Mapped[int | None] = mapped_column(Integer)
    height: Mapped[int | None] = mapped_column(Integer)
    aspect_ratio: Mapped[float | None] = mapped_column(Float)
    bleed_class: Mapped[str | None] = mapped_column(String(16))
    border_color: Mapped[str | None] = mapped_column(String(16))
    collector_raw: Mapped[str | None] = mapped_column(Text)
    collector_number: Mapped[str | None] = mapped_column(String(16))
    set_code_raw: Mapped[str | None] = mapped_column(String(16))
    set_code: Mapped[str | None] = mapped_column(String(16))
    collector_total: Mapped[int | None] = mapped_column(Integer)
    collector_layout: Mapped[str | None] = mapped_column(String(16))
    collector_star: Mapped[bool | None] = mapped_column(Boolean)
    """Whether the pixels show a star before a legal line's slash ("123★/350"); NULL when they cannot tell."""
    collector_end_height: Mapped[str | None] = mapped_column(String(16))
    """How tall the glyph before a legal line's slash stands: "x-height" or "full"; NULL when they cannot tell."""
    language: Mapped[str | None] = mapped_column(String(8))
    legal_raw: Mapped[str | None] = mapped_column(Text)
    copyright_year: Mapped[int | None] = mapped_column(Integer)
    proxy_marker: Mapped[bool | None] = mapped_column(Boolean)
    art_phash: Mapped[int | None] = mapped_column(BigInteger)
    symbol_phash: Mapped[int | None] = mapped_column(BigInteger)
    truncated: Mapped[bool] = mapped_column(Boolean, default=False, server_default=text("false"))
    blur_variance: Mapped[float | None] = mapped_column(Float)
    entropy: Mapped[float | None] = mapped_column(Float)
    card_corners: Mapped[list[float] | None] = mapped_column(ARRAY(Float))
    """The card's four corners in the image as it reads (x, y each), normalised to 0..1: 8 numbers."""
    run_id: Mapped[str | None] = mapped_column(String(64))
    decided_by: Mapped[str | None] = mapped_column(Text)  # the Stage D calculators that decided on this row
    carried_from_card_id: Mapped[int | None] = mapped_column(BigInteger)
    """The card whose extraction of the same bytes this row copies (an identity group); None: extracted itself."""
    created_at: Mapped[datetime] = created()
    updated_at: Mapped[datetime] = created()


class CardPrintingTag(Base):
    """A vote: a voter says a card shows a printing, or matches none."""

    __tablename__ = "card_printing_tag"
    __table_args__ = (
        CheckConstraint("(printing_id IS NOT NULL) <> is_no_match", name="ck_tag_printing_xor_no_match"),
        CheckConstraint("source IN ('ocr', 'user', 'admin')", name="ck_tag_source"),
        Index(
            "uq_tag_card_printing_voter",
            "card_id",
            "printing_id",
            "anonymous_id",
            unique=True,
            postgresql_where=text("NOT is_no_match"),
        ),
        Index(
            "uq_tag_card_voter_no_match",
            "card_id",
            "anonymous_id",
            unique=True,
            postgresql_where=text("is_no_match"),
        ),
        Index("ix_tag_card_voter", "card_id", "anonymous_id"),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    card_id: Mapped[int] = mapped_column(ForeignKey("card.id", ondelete="CASCADE"))
    printing_id: Mapped[int | None] = mapped_column(ForeignKey("printing.id", ondelete="CASCADE"))
    is_no_match: Mapped[bool] = mapped_column(Boolean, default=False, server_default=text("false"))
    anonymous_id: Mapped[str] = mapped_column(String(100))
    source: Mapped[str] = mapped_column(String(16))
    confidence: Mapped[float | None] = mapped_column(Float)
    run_id: Mapped[str | None] = mapped_column(String(64))
    applied_from_card_id: Mapped[int | None] = mapped_column(BigInteger)
    """A human vote applied to this card because it is a copy of the card voted on (that card's id)."""
    created_at: Mapped[datetime] = created()


class CardPrintingTagArchive(Base):
    """A vote that was replaced or withdrawn: the vote as it was, when and why it left, and the run that moved it.
    Append-only (a trigger refuses UPDATE, DELETE and TRUNCATE); no foreign keys, so history outlives its card."""

    __tablename__ = "card_printing_tag_archive"
    __table_args__ = (
        CheckConstraint(f"reason IN ({', '.join(repr(r) for r in ARCHIVE_REASONS)})", name="ck_tag_archive_reason"),
        Index("ix_tag_archive_card", "card_id", "id"),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    tag_id: Mapped[int] = mapped_column(BigInteger)
    card_id: Mapped[int] = mapped_column(BigInteger)
    printing_id: Mapped[int | None] = mapped_column(BigInteger)
    is_no_match: Mapped[bool] = mapped_column(Boolean)
    anonymous_id: Mapped[str] = mapped_column(String(100))
    source: Mapped[str] = mapped_column(String(16))
    confidence: Mapped[float | None] = mapped_column(Float)
    vote_run_id: Mapped[str | None] = mapped_column(String(64))
    applied_from_card_id: Mapped[int | None] = mapped_column(BigInteger)
    voted_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    reason: Mapped[str] = mapped_column(String(16))
    run_id: Mapped[str | None] = mapped_column(String(64))
    """The run that archived the vote (None for a human vote or the migration)."""
    detail: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict, server_default=EMPTY_JSON)
    archived_at: Mapped[datetime] = created()


class CardScanLog(Base):
    """Append-only abstention or routing marker; `evidence_key` dedups review routing per evidence version."""

    __tablename__ = "card_scan_log"
    __table_args__ = (
        Index("ix_scan_log_card_voter", "card_id", "anonymous_id"),
        Index("ix_scan_log_stage_c_created", "created_at",
              postgresql_where=text("anonymous_id = 'stage-c-extract-v1'")),
        Index("ix_scan_log_stage_c_key", "evidence_key",
              postgresql_where=text("anonymous_id = 'stage-c-extract-v1'")),
        Index("ix_scan_log_lack_of_printing", "card_id",
              postgresql_where=text("skip_reason IN ('no-candidates', 'number-not-found', 'unknown-set-code')")),
        Index(
            "uq_scan_log_review_once",
            "card_id",
            "anonymous_id",
            "evidence_key",
            unique=True,
            postgresql_where=text("skip_reason = 'to-review'"),
        ),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    card_id: Mapped[int] = mapped_column(ForeignKey("card.id", ondelete="CASCADE"))
    anonymous_id: Mapped[str] = mapped_column(String(100))
    skip_reason: Mapped[str] = mapped_column(String(64))
    evidence_key: Mapped[str | None] = mapped_column(Text)
    run_id: Mapped[str | None] = mapped_column(String(64))
    detail: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict, server_default=EMPTY_JSON)
    created_at: Mapped[datetime] = created()
