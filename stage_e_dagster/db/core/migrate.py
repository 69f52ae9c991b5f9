"""The schema: apply the Alembic migrations and the code's work rules (an explicit step), and check a database is
ready before use.

This is the schema edge, so it takes a URL: Alembic is configured with one, and each call works on a one-off
NullPool engine of its own (so no pooled session outlives an upgrade or holds its locks).
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, create_engine, pool, text
from sqlalchemy.exc import InterfaceError, OperationalError, ProgrammingError

from stage_e_dagster.db.core.urls import normalise_url
from stage_e_dagster.db.work import work_rule

MIGRATIONS = Path(__file__).parent / "migrations"
# Serialises concurrent upgrades (a CLI and a Dagster step starting at once) on one database.
_MIGRATION_LOCK_KEY = 0x5E_DB_00_01


class SchemaNotCurrent(RuntimeError):
    """The application database is not at the newest migration; the message says how to upgrade it."""


def alembic_config(url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def upgrade(url: str, revision: str = "head") -> None:
    """Upgrade the database at `url` to `revision` (holding an advisory lock so concurrent callers queue); at head,
    also store this code's work rules (`db.work.work_rule.sync`), recomputing every card's work if they changed."""
    engine = create_engine(normalise_url(url), poolclass=pool.NullPool)
    try:
        with engine.begin() as conn:
            conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _MIGRATION_LOCK_KEY})
            config = alembic_config(url)
            config.attributes["connection"] = conn
            command.upgrade(config, revision)
        if revision == "head":
            work_rule.sync(engine, settings_rule())
    finally:
        engine.dispose()


def settings_rule() -> work_rule.Rule:
    """The code's work rule under the eligibility settings of this process's environment."""
    from stage_e_dagster.settings import Settings

    settings = Settings.from_env()
    return work_rule.code_rule(settings.min_dpi, settings.english_match)


def head_revision() -> str:
    """The newest migration's revision id."""
    head = ScriptDirectory.from_config(alembic_config("postgresql://")).get_current_head()
    assert head is not None
    return head


_current: set[str] = set()


def require_head(url: str) -> None:
    """Raise `SchemaNotCurrent` unless the database at `url` is at the newest migration and holds this code's work
    rules (a success is remembered for the process). A database that cannot be reached is not judged here: the work
    that needs it reports that."""
    if url in _current:
        return
    engine = create_engine(normalise_url(url), poolclass=pool.NullPool)
    try:
        judged = _require_head(engine)
    finally:
        engine.dispose()
    if judged:
        _current.add(url)


def _require_head(engine: Engine) -> bool:
    """`require_head` on `engine`; False when the database cannot be reached (nothing judged)."""
    try:
        with engine.connect() as conn:
            current = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
    except ProgrammingError:
        current = None
    except (OperationalError, InterfaceError):
        return False
    if current != head_revision():
        raise SchemaNotCurrent(
            f"the application database is at schema revision {current or 'none'}, not {head_revision()}: "
            "run `stage-e db upgrade` (or `make demo`, which does it)"
        )
    with engine.connect() as conn:
        if not work_rule.is_current(conn, settings_rule()):
            raise SchemaNotCurrent(
                "the application database's work rules (extractor versions, calculators, or the eligibility settings "
                "STAGE_E_MIN_DPI and STAGE_E_MATCH_FOREIGN_TO_ENGLISH) are not this code's: run `stage-e db upgrade` "
                "once this version and these settings are deployed everywhere"
            )
    return True
