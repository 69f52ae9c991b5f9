"""The application database as a Dagster resource: a URL (from the environment) and a pooled engine."""

from __future__ import annotations

from dagster import ConfigurableResource
from sqlalchemy import Engine

from stage_e_dagster.db.engine import get_engine
from stage_e_dagster.db.urls import normalise_url


class AppDatabase(ConfigurableResource):
    """Where Stage C/D/E read and write domain state. The URL is a secret: it never goes into metadata."""

    database_url: str

    @property
    def url(self) -> str:
        return normalise_url(self.database_url)

    def engine(self) -> Engine:
        """A pooled engine with the schema at head."""
        return get_engine(self.url)
