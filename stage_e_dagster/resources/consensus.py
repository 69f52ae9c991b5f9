"""The consensus policy Stage D resolves cards under, as a Dagster resource."""

from __future__ import annotations

from dagster import ConfigurableResource
from pydantic import Field

from stage_e_dagster.domain.consensus import POLICIES


class Consensus(ConfigurableResource):
    """`funnel` (machine votes never resolve a card alone) or `machine-quorum` (two agreeing calculators may)."""

    policy: str = Field(default="funnel", description=f"One of {', '.join(POLICIES)}.")
    review_page_url: str | None = Field(
        default=None, description="Base address of the review page (`stage-e review serve`), where people vote; "
                                  "Stage D links its materializations to it. None: no links.")
