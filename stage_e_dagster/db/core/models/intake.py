"""The tables of intake: the places scans come from (`source`), each uploaded scan with its consensus state
(`card`), and the hosts remote fetches go to (`fetch_host`)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    SmallInteger,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.orm import Mapped, mapped_column

from stage_e_dagster.db.core.models.base import Base, created


class Source(Base):
    """A place card scans come from: a directory, an S3-compatible bucket and prefix, or an HTTP(S) manifest."""

    __tablename__ = "source"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    key: Mapped[str] = mapped_column(String(200), unique=True)
    kind: Mapped[str] = mapped_column(String(32), default="directory", server_default="directory")
    location: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = created()
    synced_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    """When the last successful sync started (files older than it, with the same size, are not read again)."""
    synced_listing: Mapped[str | None] = mapped_column(String(64))
    """Digest of the directory listing the last successful sync started from (`domain.scan_files.list_images`)."""
    endpoint: Mapped[str | None] = mapped_column(Text)
    """An S3-compatible store's endpoint URL (None: the provider's default for the region)."""
    region: Mapped[str | None] = mapped_column(Text)
    credentials: Mapped[str | None] = mapped_column(Text)
    """The name of the credential set a remote source signs with (secrets come from the environment, never here)."""
    list_cursor: Mapped[str | None] = mapped_column(Text)
    """The last key a listing pass under way has taken in ('' just started; None: no pass under way)."""
    list_started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    list_token: Mapped[str | None] = mapped_column(Text)
    """A manifest's validator (ETag or Last-Modified) as last synced: an unchanged manifest is not downloaded."""
    fetch_ok_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    """When the source last answered a fetch."""
    allow_private: Mapped[bool] = mapped_column(Boolean, server_default=text("false"))
    """A manifest whose images may sit on loopback, private or link-local addresses off its own origin."""


class FetchHost(Base):
    """One host remote fetches went to: when it last answered, and the 403s in a row since (a lockout is judged per
    host, `db.intake.fetch_state`)."""

    __tablename__ = "fetch_host"

    host: Mapped[str] = mapped_column(Text, primary_key=True)
    fetch_ok_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    forbidden_streak: Mapped[int] = mapped_column(Integer, server_default="0")
    forbidden_cards: Mapped[list[int]] = mapped_column(ARRAY(BigInteger), server_default=text("'{}'::bigint[]"))


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
        Index("ix_card_remote_order", "source_id", "identifier", postgresql_ops={"identifier": 'COLLATE "C"'},
              postgresql_where=text("remote_token IS NOT NULL")),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    source_id: Mapped[int] = mapped_column(ForeignKey("source.id", ondelete="CASCADE"))
    identifier: Mapped[str] = mapped_column(Text)
    name: Mapped[str] = mapped_column(Text)
    name_normalised: Mapped[str] = mapped_column(Text)
    expansion_hint: Mapped[str | None] = mapped_column(String(8))
    content_sha256: Mapped[str | None] = mapped_column(String(64))
    """The bytes' sha256; None for a remote card never fetched (or its listing's declared hash, not yet verified)."""
    content_phash: Mapped[int | None] = mapped_column(BigInteger)
    size_bytes: Mapped[int | None] = mapped_column(BigInteger)
    remote_token: Mapped[str | None] = mapped_column(Text)
    """A remote card's change token from its source's listing; a new token means new bytes."""
    remote_url: Mapped[str | None] = mapped_column(Text)
    """Where a manifest entry's bytes are (an S3 card's address is its source's prefix and its identifier)."""
    content_verified: Mapped[bool] = mapped_column(Boolean, server_default=text("true"))
    """Whether `content_sha256` was computed from the bytes (false for a remote card not fetched yet)."""
    fetch_failed: Mapped[str | None] = mapped_column(String(32))
    """The named skip that ended this version's fetching for good (`fetch-gone`, `fetch-forbidden`, ...)."""
    fetch_attempts: Mapped[int] = mapped_column(SmallInteger, server_default="0")
    """Broken fetches of this version so far (retried a bounded number of times)."""
    printing_status: Mapped[str] = mapped_column(String(16), default="unresolved", server_default="unresolved")
    resolved_printing_id: Mapped[int | None] = mapped_column(ForeignKey("printing.id", ondelete="SET NULL"))
    missing_since: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    kind: Mapped[str] = mapped_column(String(16), default="card", server_default="card")
    """`card`, `token` or `cardback`, from the source's folder and file-name conventions (`domain.kinds`)."""
    language: Mapped[str | None] = mapped_column(String(8))
    """The language the conventions name (a Scryfall code), None when they name none."""
    tags: Mapped[list[str]] = mapped_column(ARRAY(Text), default=list, server_default=text("'{}'::text[]"))
    """The conventions' tags, e.g. `custom-art`."""
    created_at: Mapped[datetime] = created()
    updated_at: Mapped[datetime] = created()
