"""The schema as migrated: constraints that the design relies on hold on a real Postgres."""

from __future__ import annotations

import time

import psycopg2
import pytest
from sqlalchemy import inspect

from stage_e_dagster.db.core.engine import get_engine


def _seed(cur) -> tuple[int, int]:
    cur.execute("INSERT INTO source (key, location) VALUES ('s', '/x') RETURNING id")
    source_id = cur.fetchone()[0]
    cur.execute(
        "INSERT INTO card (source_id, identifier, name, name_normalised, content_sha256, size_bytes) "
        "VALUES (%s, 'a.png', 'A', 'a', 'ff', 1) RETURNING id",
        (source_id,),
    )
    card_id = cur.fetchone()[0]
    cur.execute(
        "INSERT INTO printing (scryfall_id, name, name_normalised, set_code, collector_number) "
        "VALUES ('p1', 'A', 'a', 'm20', '1') RETURNING id"
    )
    return card_id, cur.fetchone()[0]


def test_every_design_table_exists(db_url):
    names = set(inspect(get_engine(db_url)).get_table_names())
    assert {
        "source", "card", "expansion", "printing", "image_evidence", "card_printing_tag", "card_scan_log",
        "dispatch_ledger", "envelope_trip", "sweep_cursor",
    } <= names


def test_vote_check_constraint_requires_printing_xor_no_match(pg_connect):
    cur = pg_connect().cursor()
    card_id, printing_id = _seed(cur)
    insert = ("INSERT INTO card_printing_tag (card_id, printing_id, is_no_match, anonymous_id, source) "
              "VALUES (%s, %s, %s, 'v', 'ocr')")
    with pytest.raises(psycopg2.errors.CheckViolation):
        cur.execute(insert, (card_id, printing_id, True))
    with pytest.raises(psycopg2.errors.CheckViolation):
        cur.execute(insert, (card_id, None, False))
    cur.execute(insert, (card_id, printing_id, False))
    cur.execute(insert, (card_id, None, True))


def test_partial_unique_indexes_reject_duplicate_votes(pg_connect):
    """The schema's own guarantee, tested once here: the same vote twice. One vote per (card, voter), which the
    indexes allow to be broken (a printing vote and a no-match vote of one voter), is checked by the pipeline's
    tests through `db.reporting.invariants.duplicate_votes`."""
    cur = pg_connect().cursor()
    card_id, printing_id = _seed(cur)
    insert = ("INSERT INTO card_printing_tag (card_id, printing_id, is_no_match, anonymous_id, source) "
              "VALUES (%s, %s, %s, %s, 'ocr')")
    cur.execute(insert, (card_id, printing_id, False, "v"))
    with pytest.raises(psycopg2.errors.UniqueViolation):
        cur.execute(insert, (card_id, printing_id, False, "v"))
    cur.execute(insert, (card_id, None, True, "v"))
    with pytest.raises(psycopg2.errors.UniqueViolation):
        cur.execute(insert, (card_id, None, True, "v"))
    cur.execute(insert, (card_id, printing_id, False, "other-voter"))


def test_evidence_is_unique_per_card_and_bytes(pg_connect):
    """The schema's own guarantee, tested once here: the pipeline's checks test the rule it does not cover (one
    evidence row per card while its bytes stay the same: `testkit.oracle`)."""
    cur = pg_connect().cursor()
    card_id, _ = _seed(cur)
    insert = "INSERT INTO image_evidence (card_id, content_sha256) VALUES (%s, %s)"
    cur.execute(insert, (card_id, "ff"))
    with pytest.raises(psycopg2.errors.UniqueViolation):
        cur.execute(insert, (card_id, "ff"))
    cur.execute(insert, (card_id, "ee"))  # other bytes of the same card: a row of their own


def test_each_test_gets_an_empty_database(pg_connect):
    cur = pg_connect().cursor()
    cur.execute("SELECT count(*) FROM card")
    assert cur.fetchone()[0] == 0


def test_models_and_migrations_agree(db_url):
    """Autogenerate finds nothing to do: every model change went through a migration."""
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    from stage_e_dagster.db.core.models import Base

    with get_engine(db_url).connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    assert diff == []


def test_an_unmigrated_database_is_refused_with_what_to_do_and_the_cli_migrates_it(pg_server_url, monkeypatch):
    from click.testing import CliRunner
    from dagster import build_init_resource_context

    from stage_e_dagster.cli import main
    from stage_e_dagster.db.core.migrate import SchemaNotCurrent, require_head
    from stage_e_dagster.resources.database import AppDatabase
    from testkit.server import scratch_database

    with scratch_database(pg_server_url, "empty") as url:
        resource = AppDatabase(database_url=url)
        with pytest.raises(SchemaNotCurrent, match="stage-e db upgrade"):
            resource.setup_for_execution(build_init_resource_context())
        assert "card" not in inspect(get_engine(url)).get_table_names()  # an engine never migrates
        monkeypatch.setenv("STAGE_E_DATABASE_URL", url)
        result = CliRunner().invoke(main, ["trips", "list"])  # any command brings the schema to head first
        assert result.exit_code == 0, result.output
        require_head(url)
        get_engine.cache_clear()


def _backend(engine) -> int:
    from sqlalchemy import text

    with engine.connect() as conn:
        return conn.execute(text("SELECT pg_backend_pid()")).scalar_one()


def test_an_idle_pooled_connection_whose_backend_ended_is_replaced_at_checkout(db_url, pg_connect, monkeypatch):
    from stage_e_dagster.db.core import engine as engines

    monkeypatch.setattr(engines, "IDLE_PING_SECONDS", 0.05)
    engine = get_engine(db_url)
    first = _backend(engine)
    with pg_connect().cursor() as cur:  # another process ends that session (a server restart does the same)
        cur.execute("SELECT pg_terminate_backend(%s)", (first,))
    time.sleep(0.2)  # idle longer than IDLE_PING_SECONDS: pinged at checkout, found dead, replaced
    assert _backend(engine) != first


def test_a_connection_used_a_moment_ago_is_not_pinged_and_a_dead_one_is_replaced_after_one_failure(db_url, pg_connect):
    """The trade for no round trip per checkout: a backend ended within IDLE_PING_SECONDS of its last use fails the
    first statement on it; the engine then drops it and the next checkout connects afresh."""
    from sqlalchemy.exc import OperationalError

    engine = get_engine(db_url)
    first = _backend(engine)
    with pg_connect().cursor() as cur:
        cur.execute("SELECT pg_terminate_backend(%s)", (first,))
    with pytest.raises(OperationalError):
        _backend(engine)
    assert _backend(engine) != first
