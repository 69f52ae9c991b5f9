"""The review page's table: which reviewer has which card open."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import DateTime, ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from stage_e_dagster.db.core.models.base import Base, created


class ReviewClaim(Base):
    """A card a reviewer has open on the review page; other reviewers skip it until `expires_at`."""

    __tablename__ = "review_claim"
    __table_args__ = (Index("ix_review_claim_reviewer", "reviewer"),)

    card_id: Mapped[int] = mapped_column(ForeignKey("card.id", ondelete="CASCADE"), primary_key=True,
                                         autoincrement=False)
    reviewer: Mapped[str] = mapped_column(String(100))
    claimed_at: Mapped[datetime] = created()
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
