"""The declarative base every table's model derives from, and the column shapes the table families share."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import DateTime, func, text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    """Declarative base; Alembic's autogenerate and the migrations read `Base.metadata`."""


EMPTY_JSON = text("'{}'::jsonb")
"""The server default of a JSONB column that starts as an empty object."""


def created() -> Mapped[datetime]:
    """A timestamp column the database fills with the time of the insert."""
    return mapped_column(DateTime(timezone=True), server_default=func.now(), nullable=False)
