"""The catalogue's tables: sets (`expansion`), printings, and the version that moves with either."""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import BigInteger, Boolean, CheckConstraint, Date, Index, Integer, String, Text, text
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.orm import Mapped, mapped_column

from stage_e_dagster.db.core.models.base import Base, created


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
        Index("ix_printing_face_names_normalised", "face_names_normalised", postgresql_using="gin"),
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
    face_names_normalised: Mapped[list[str] | None] = mapped_column(ARRAY(Text))


class CatalogVersion(Base):
    """The single row whose `version` moves with every change to `printing` or `expansion` (statement triggers,
    migration 0014): a process keeps what it read of the catalogue while the version is unchanged."""

    __tablename__ = "catalog_version"
    __table_args__ = (CheckConstraint("id", name="catalog_version_id_check"),)

    id: Mapped[bool] = mapped_column(Boolean, primary_key=True, server_default=text("true"))
    version: Mapped[int] = mapped_column(BigInteger)
    changed_at: Mapped[datetime] = created()
