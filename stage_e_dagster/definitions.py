"""Dagster definitions: assets, jobs, sensors, schedules and resources. Wiring only."""

from __future__ import annotations

from dagster import Definitions, EnvVar

from stage_e_dagster.resources.database import AppDatabase

defs = Definitions(
    resources={
        "database": AppDatabase(database_url=EnvVar("STAGE_E_DATABASE_URL")),
    },
)
