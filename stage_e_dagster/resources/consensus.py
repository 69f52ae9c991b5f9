"""The consensus policy Stage D resolves cards under, as a Dagster resource."""

from __future__ import annotations

from dagster import ConfigurableResource
from pydantic import Field

from stage_e_dagster.domain.consensus import POLICIES


class Consensus(ConfigurableResource):
    """`funnel` (machine votes never resolve a card alone) or `machine-quorum` (two agreeing calculators may)."""

    policy: str = Field(default="funnel", description=f"One of {', '.join(POLICIES)}.")
