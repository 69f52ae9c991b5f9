"""The tables of work and runs: the dispatch ledger, the work rule and queue, envelope trips, the fetch pace
and the sweep's cursors."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    CHAR,
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    SmallInteger,
    String,
    Text,
    func,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB
from sqlalchemy.orm import Mapped, mapped_column

from stage_e_dagster.db.core.models.base import EMPTY_JSON, Base, created


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
    counters: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict, server_default=EMPTY_JSON)
    failure_reason: Mapped[str | None] = mapped_column(Text)
    started_at: Mapped[datetime] = created()
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    heartbeat_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    owner: Mapped[str | None] = mapped_column(Text)


class WorkRule(Base):
    """The single row naming what "current" means for the work rules: the code's extractor versions, Stage D's
    `decided_by` mark, Stage C's voter id and the eligibility settings (written by `db.work.work_rule.sync`)."""

    __tablename__ = "work_rule"
    __table_args__ = (CheckConstraint("id = 1", name="ck_work_rule_single_row"),)

    id: Mapped[int] = mapped_column(SmallInteger, primary_key=True, server_default=text("1"))
    current_versions: Mapped[dict[str, str]] = mapped_column(JSONB, server_default=EMPTY_JSON)
    decided_by: Mapped[str] = mapped_column(Text, server_default="")
    stage_c_id: Mapped[str] = mapped_column(Text, server_default="")
    min_dpi: Mapped[int] = mapped_column(Integer, server_default="200")
    """Scans under this resolution get no machine vote (`STAGE_E_MIN_DPI`)."""
    english_match: Mapped[bool] = mapped_column(Boolean, server_default=text("false"))
    """Non-English scans may be machine-voted onto their English printings (`STAGE_E_MATCH_FOREIGN_TO_ENGLISH`)."""
    recomputed_through: Mapped[int | None] = mapped_column(BigInteger)
    updated_at: Mapped[datetime] = created()


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
    since: Mapped[datetime] = created()


class EnvelopeTrip(Base):
    """A recorded envelope breach; the stream stays halted until it is acknowledged with a note."""

    __tablename__ = "envelope_trip"
    __table_args__ = (Index("ix_trip_open", "tripped_at", postgresql_where=text("acknowledged_at IS NULL")),)

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    bar: Mapped[str] = mapped_column(String(32))
    observed: Mapped[float | None] = mapped_column(Float)
    ceiling: Mapped[float | None] = mapped_column(Float)
    detail: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict, server_default=EMPTY_JSON)
    run_id: Mapped[str | None] = mapped_column(String(64), unique=True)
    tripped_at: Mapped[datetime] = created()
    acknowledged_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    acknowledged_note: Mapped[str | None] = mapped_column(Text)


class FetchPace(Base):
    """The fleet-wide fetch limiter's one row: when the next fetch may start (`tat`) and the shared pace factor."""

    __tablename__ = "fetch_pace"
    __table_args__ = (CheckConstraint("id = 1", name="ck_fetch_pace_single_row"),
                      CheckConstraint("factor > 0 AND factor <= 1", name="ck_fetch_pace_factor"))

    id: Mapped[int] = mapped_column(SmallInteger, primary_key=True, server_default=text("1"))
    tat: Mapped[datetime] = created()
    factor: Mapped[float] = mapped_column(Float, server_default=text("1"))
    generation: Mapped[int] = mapped_column(BigInteger, server_default=text("0"))
    clean_streak: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    halvings: Mapped[int] = mapped_column(BigInteger, server_default=text("0"))
    updated_at: Mapped[datetime] = created()


class SweepCursor(Base):
    """A named position of the backstop sweep, advanced by compare-and-swap."""

    __tablename__ = "sweep_cursor"

    name: Mapped[str] = mapped_column(String(32), primary_key=True)
    position: Mapped[int] = mapped_column(BigInteger, default=0, server_default=text("0"))
    wrap_count: Mapped[int] = mapped_column(Integer, default=0, server_default=text("0"))
    updated_at: Mapped[datetime] = created()
