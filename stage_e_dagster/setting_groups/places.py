"""Settings of place: the application and Dagster databases, the local home, and the test suite's server."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from stage_e_dagster.setting_groups.declare import flag, path, setting


@dataclass(frozen=True)
class PlaceSettings:
    """Where the databases and the local state live."""

    database_url: str | None = setting(
        "STAGE_E_DATABASE_URL", None, "application database (`postgresql+psycopg2://…`)",
        shown="embedded server, database `stage_e`")
    dagster_database_url: str | None = setting(
        "STAGE_E_DAGSTER_DATABASE_URL", None, "Dagster's run/event storage",
        shown="embedded server, database `dagster`")
    home: Path = setting(
        "STAGE_E_HOME", Path(".stage_e"), "embedded Postgres data, Dagster home, demo data", path,
        shown="`./.stage_e`")


@dataclass(frozen=True)
class SuiteSettings:
    """How the test suite finds a Postgres server."""

    test_database_url: str | None = setting(
        "STAGE_E_TEST_DATABASE_URL", None, "tests use this server instead of starting their own", shown="unset")
    test_no_docker: bool = setting(
        "STAGE_E_TEST_NO_DOCKER", False, "`1`: tests never try a testcontainers Postgres", flag, shown="unset")
