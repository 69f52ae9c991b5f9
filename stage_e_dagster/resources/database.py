"""The application database as a Dagster resource: a URL (from the environment), checked to be at schema head, and
resolved here, once, into the engine everything below takes."""

from __future__ import annotations

from dagster import ConfigurableResource, InitResourceContext
from pydantic import Field
from sqlalchemy import Engine

from stage_e_dagster.db.core.engine import get_engine
from stage_e_dagster.db.core.migrate import require_head
from stage_e_dagster.db.core.urls import normalise_url


class AppDatabase(ConfigurableResource):
    """Where Stage C/D/E read and write domain state. The URL is a secret: it never goes into metadata.

    Other resources that need the database (OCR slots, the envelope) nest this one rather than carry a URL.
    """

    database_url: str = Field(description="The application database's URL (`postgresql+psycopg2://...`); a secret, "
                                          "so the definitions pass it as an `EnvVar`.")

    @property
    def url(self) -> str:
        return normalise_url(self.database_url)

    @property
    def engine(self) -> Engine:
        """The process's pooled engine for this database (`db.core.engine.get_engine`): what stages, control and
        `db/` take."""
        return get_engine(self.url)

    def setup_for_execution(self, context: InitResourceContext) -> None:
        """Fail fast, with what to do, when the schema is not at head (checked once per process)."""
        require_head(self.url)
