"""Apply the Alembic migrations. Commands that need the schema call `ensure_schema` themselves."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import create_engine, pool, text

MIGRATIONS = Path(__file__).parent / "migrations"
# Serialises concurrent upgrades (a CLI and a Dagster step starting at once) on one database.
_MIGRATION_LOCK_KEY = 0x5E_DB_00_01


def alembic_config(url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def upgrade(url: str, revision: str = "head") -> None:
    """Upgrade the database at `url` to `revision`, holding an advisory lock so concurrent callers queue."""
    engine = create_engine(url, poolclass=pool.NullPool)
    try:
        with engine.begin() as conn:
            conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _MIGRATION_LOCK_KEY})
            config = alembic_config(url)
            config.attributes["connection"] = conn
            command.upgrade(config, revision)
    finally:
        engine.dispose()


_checked: set[str] = set()


def ensure_schema(url: str) -> None:
    """Upgrade once per process per URL."""
    if url not in _checked:
        upgrade(url)
        _checked.add(url)
