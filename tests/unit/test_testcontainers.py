"""The testcontainers path of the Postgres resolution order: used when a Docker daemon answers, else skipped."""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine, inspect

from stage_e_dagster.db.core.migrate import upgrade
from testkit.server import docker_available


def test_migrations_apply_on_a_testcontainers_postgres():
    ok, why = docker_available()
    if not ok:
        pytest.skip(f"testcontainers path skipped: {why}; the suite uses an embedded Postgres instead")
    from testcontainers.postgres import PostgresContainer

    with PostgresContainer("postgres:16-alpine", driver="psycopg2") as container:
        url = container.get_connection_url()
        upgrade(url)
        assert "card_printing_tag" in inspect(create_engine(url)).get_table_names()
