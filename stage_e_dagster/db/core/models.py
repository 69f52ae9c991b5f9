"""SQLAlchemy 2.0 typed models for every table in the design. Table and column names are a contract."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from sqlalchemy import (
    CHAR,
    BigInteger,
    Boolean,
    CheckConstraint,
    Date,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    SmallInteger,
    String,
    Text,
    UniqueConstraint,
    func,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from stage_e_dagster.domain.voters import ARCHIVE_REASONS


class Base(DeclarativeBase):
    """Declarative base; Alembic's autogenerate and the migrations read `Base.metadata`."""


_EMPTY_JSON = text("'{}'::jsonb")


def _created() -> Mapped[datetime]:
    return mapped_column(DateTime(timezone=True), server_default=func.now(), nullable=False)


class Source(Base):
    """A place card scans come from (today: a directory)."""

    __tablename__ = "source"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    key: Mapped[str] = mapped_column(String(200), unique=True)
    kind: Mapped[str] = mapped_column(String(32), default="directory", server_default="directory")
    location: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = _created()
    synced_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    """When the last successful sync started (files older than it, with the same size, are not read again)."""
    synced_listing: Mapped[str | None] = mapped_column(String(64))
    """Digest of the directory listing the last successful sync started from (`domain.scan_files.list_images`)."""


class Card(Base):
    """One uploaded scan and its consensus state."""

    __tablename__ = "card"
    __table_args__ = (
        UniqueConstraint("source_id", "identifier", name="uq_card_source_identifier"),
        CheckConstraint(
            "printing_status IN ('unresolved', 'resolved', 'no_match')", name="ck_card_printing_status"
        ),
        Index("ix_card_name_normalised", "name_normalised"),
        Index("ix_card_updated_at_id", "updated_at", "id"),
        Index("ix_card_content_sha256", "content_sha256"),
        Index("ix_card_unresolved", "id",
              postgresql_where=text("printing_status = 'unresolved' AND missing_since IS NULL")),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    source_id: Mapped[int] = mapped_column(ForeignKey("source.id", ondelete="CASCADE"))
    identifier: Mapped[str] = mapped_column(Text)
    name: Mapped[str] = mapped_column(Text)
    name_normalised: Mapped[str] = mapped_column(Text)
    expansion_hint: Mapped[str | None] = mapped_column(String(8))
    content_sha256: Mapped[str] = mapped_column(String(64))
    content_phash: Mapped[int | None] = mapped_column(BigInteger)
    size_bytes: Mapped[int] = mapped_column(BigInteger)
    printing_status: Mapped[str] = mapped_column(String(16), default="unresolved", server_default="unresolved")
    resolved_printing_id: Mapped[int | None] = mapped_column(ForeignKey("printing.id", ondelete="SET NULL"))
    missing_since: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    kind: Mapped[str] = mapped_column(String(16), default="card", server_default="card")
    """`card`, `token` or `cardback`, from the source's folder and file-name conventions (`domain.kinds`)."""
    language: Mapped[str | None] = mapped_column(String(8))
    """The language the conventions name (a Scryfall code), None when they name none."""
    tags: Mapped[list[str]] = mapped_column(ARRAY(Text), default=list, server_default=text("'{}'::text[]"))
    """The conventions' tags, e.g. `custom-art`."""
    created_at: Mapped[datetime] = _created()
    updated_at: Mapped[datetime] = _created()


class Expansion(Base):
    """A set: code (lower case, as Scryfall writes it), name, release date, reference symbol phash, and the printed
    size after the slash of its collector lines when a sets file gave it."""

    __tablename__ = "expansion"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    code: Mapped[str] = mapped_column(String(8), unique=True)
    name: Mapped[str] = mapped_column(Text)
    released_at: Mapped[date | None] = mapped_column(Date)
    symbol_phash: Mapped[int | None] = mapped_column(BigInteger)
    printed_total: Mapped[int | None] = mapped_column(Integer)


class Printing(Base):
    """One catalogue printing (a Scryfall card object)."""

    __tablename__ = "printing"
    __table_args__ = (
        Index("ix_printing_name_normalised", "name_normalised"),
        Index("ix_printing_set_number", "set_code", "collector_number"),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    scryfall_id: Mapped[str] = mapped_column(String(36), unique=True)
    name: Mapped[str] = mapped_column(Text)
    name_normalised: Mapped[str] = mapped_column(Text)
    set_code: Mapped[str] = mapped_column(String(8))
    collector_number: Mapped[str] = mapped_column(String(16))
    lang: Mapped[str | None] = mapped_column(String(8))
    released_at: Mapped[date | None] = mapped_column(Date)
    rarity: Mapped[str | None] = mapped_column(String(16))
    artist: Mapped[str | None] = mapped_column(Text)
    border_color: Mapped[str | None] = mapped_column(String(16))
    frame: Mapped[str | None] = mapped_column(String(16))
    layout: Mapped[str | None] = mapped_column(String(32))
    face_names: Mapped[list[str] | None] = mapped_column(ARRAY(Text))


class ImageEvidence(Base):
    """Stage C output for one version of a card's bytes."""

    __tablename__ = "image_evidence"
    __table_args__ = (
        UniqueConstraint("card_id", "content_sha256", name="uq_image_evidence_card_sha"),
        Index("ix_image_evidence_updated_at", "updated_at"),
        Index("ix_image_evidence_content_sha256", "content_sha256"),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    card_id: Mapped[int] = mapped_column(ForeignKey("card.id", ondelete="CASCADE"))
    content_sha256: Mapped[str] = mapped_column(String(64))
    extractor_versions: Mapped[dict[str, str]] = mapped_column(JSONB, default=dict, server_default=_EMPTY_JSON)
    width: Mapped[int | None] = mapped_column(Integer)
    height: Mapped[int | None] = mapped_column(Integer)
    aspect_ratio: Mapped[float | None] = mapped_column(Float)
    bleed_class: Mapped[str | None] = mapped_column(String(16))
    border_color: Mapped[str | None] = mapped_column(String(16))
    collector_raw: Mapped[str | None] = mapped_column(Text)
    collector_number: Mapped[str | None] = mapped_column(String(16))
    set_code_raw: Mapped[str | None] = mapped_column(String(16))
    set_code: Mapped[str | None] = mapped_column(String(16))
    language: Mapped[str | None] = mapped_column(String(8))
    legal_raw: Mapped[str | None] = mapped_column(Text)
    copyright_year: Mapped[int | None] = mapped_column(Integer)
    proxy_marker: Mapped[bool | None] = mapped_column(Boolean)
    art_phash: Mapped[int | None] = mapped_column(BigInteger)
    symbol_phash: Mapped[int | None] = mapped_column(BigInteger)
    truncated: Mapped[bool] = mapped_column(Boolean, default=False, server_default=text("false"))
    blur_variance: Mapped[float | None] = mapped_column(Float)
    entropy: Mapped[float | None] = mapped_column(Float)
    run_id: Mapped[str | None] = mapped_column(String(64))
    decided_by: Mapped[str | None] = mapped_column(Text)  # the Stage D calculators that decided on this row
    carried_from_card_id: Mapped[int | None] = mapped_column(BigInteger)
    """The card whose extraction of the same bytes this row copies (an identity group); None: extracted itself."""
    created_at: Mapped[datetime] = _created()
    updated_at: Mapped[datetime] = _created()


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
    created_at: Mapped[datetime] = _created()


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
    detail: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict, server_default=_EMPTY_JSON)
    archived_at: Mapped[datetime] = _created()


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
    detail: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict, server_default=_EMPTY_JSON)
    created_at: Mapped[datetime] = _created()


class DispatchLedger(Base):
    """One row per micro-batch run, keyed by the Dagster run id."""

    __tablename__ = "dispatch_ledger"
    __table_args__ = (
        CheckConstraint(
            "status IN ('running', 'completed', 'throttled', 'halted', 'failed')", name="ck_ledger_status"
        ),
        Index("ix_ledger_running_cards", "card_ids", postgresql_using="gin",
              postgresql_where=text("status = 'running'")),
        Index("ix_ledger_status", "status"),
        Index("ix_ledger_running_heartbeat", "heartbeat_at", postgresql_where=text("status = 'running'")),
    )

    run_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    trigger: Mapped[str] = mapped_column(String(32))
    mode: Mapped[str] = mapped_column(String(16))
    card_ids: Mapped[list[int]] = mapped_column(ARRAY(BigInteger))
    status: Mapped[str] = mapped_column(String(16))
    counters: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict, server_default=_EMPTY_JSON)
    failure_reason: Mapped[str | None] = mapped_column(Text)
    started_at: Mapped[datetime] = _created()
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    heartbeat_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    owner: Mapped[str | None] = mapped_column(Text)


class WorkRule(Base):
    """The single row naming what "current" means for the work rules: the code's extractor versions, Stage D's
    `decided_by` mark, Stage C's voter id and the eligibility settings (written by `db.work.work_rule.sync`)."""

    __tablename__ = "work_rule"
    __table_args__ = (CheckConstraint("id = 1", name="ck_work_rule_single_row"),)

    id: Mapped[int] = mapped_column(SmallInteger, primary_key=True, server_default=text("1"))
    current_versions: Mapped[dict[str, str]] = mapped_column(JSONB, server_default=_EMPTY_JSON)
    decided_by: Mapped[str] = mapped_column(Text, server_default="")
    stage_c_id: Mapped[str] = mapped_column(Text, server_default="")
    min_dpi: Mapped[int] = mapped_column(Integer, server_default="200")
    """Scans under this resolution get no machine vote (`STAGE_E_MIN_DPI`)."""
    english_match: Mapped[bool] = mapped_column(Boolean, server_default=text("false"))
    """Non-English scans may be machine-voted onto their English printings (`STAGE_E_MATCH_FOREIGN_TO_ENGLISH`)."""
    recomputed_through: Mapped[int | None] = mapped_column(BigInteger)
    updated_at: Mapped[datetime] = _created()


class CardWork(Base):
    """A card that needs Stage C or D right now (maintained by triggers), with its retry backoff."""

    __tablename__ = "card_work"
    __table_args__ = (
        CheckConstraint("stage IN ('C', 'D')", name="ck_card_work_stage"),
        Index("ix_card_work_stage_card", "stage", "card_id"),
    )

    card_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("card.id", ondelete="CASCADE"), primary_key=True)
    stage: Mapped[str] = mapped_column(CHAR(1))
    attempts: Mapped[int] = mapped_column(Integer, server_default="0")
    retry_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    since: Mapped[datetime] = _created()


class EnvelopeTrip(Base):
    """A recorded envelope breach; the stream stays halted until it is acknowledged with a note."""

    __tablename__ = "envelope_trip"
    __table_args__ = (Index("ix_trip_open", "tripped_at", postgresql_where=text("acknowledged_at IS NULL")),)

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    bar: Mapped[str] = mapped_column(String(32))
    observed: Mapped[float | None] = mapped_column(Float)
    ceiling: Mapped[float | None] = mapped_column(Float)
    detail: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict, server_default=_EMPTY_JSON)
    run_id: Mapped[str | None] = mapped_column(String(64), unique=True)
    tripped_at: Mapped[datetime] = _created()
    acknowledged_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    acknowledged_note: Mapped[str | None] = mapped_column(Text)


class SweepCursor(Base):
    """A named position of the backstop sweep, advanced by compare-and-swap."""

    __tablename__ = "sweep_cursor"

    name: Mapped[str] = mapped_column(String(32), primary_key=True)
    position: Mapped[int] = mapped_column(BigInteger, default=0, server_default=text("0"))
    wrap_count: Mapped[int] = mapped_column(Integer, default=0, server_default=text("0"))
    updated_at: Mapped[datetime] = _created()


class ReviewClaim(Base):
    """A card a reviewer has open on the review page; other reviewers skip it until `expires_at`."""

    __tablename__ = "review_claim"
    __table_args__ = (Index("ix_review_claim_reviewer", "reviewer"),)

    card_id: Mapped[int] = mapped_column(ForeignKey("card.id", ondelete="CASCADE"), primary_key=True,
                                         autoincrement=False)
    reviewer: Mapped[str] = mapped_column(String(100))
    claimed_at: Mapped[datetime] = _created()
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
