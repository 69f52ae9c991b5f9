"""The micro-batch a run works on, read from the run config of its first asset (`image_evidence`).

Card ids travel in run config, never in tags (a long tag value fails run creation on Postgres storage). Downstream
assets read the same batch from `context.run.run_config`, so one RunRequest configures the whole job.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from stage_e_dagster.domain.consensus import POLICY_VAR

FIRST_ASSET = "image_evidence"
TRIGGERS = ("card-event", "backstop-sweep", "manual", "bulk")
MODES = ("passive", "bulk")


@dataclass(frozen=True)
class BatchSpec:
    """What a micro-batch run processes and why it was started."""

    card_ids: tuple[int, ...]
    trigger: str = "manual"
    mode: str = "passive"
    force: bool = False

    def run_config(self) -> dict[str, Any]:
        """Run config that hands this batch to the `micro_batch` job."""
        return {
            "ops": {
                FIRST_ASSET: {
                    "config": {
                        "card_ids": list(self.card_ids),
                        "trigger": self.trigger,
                        "mode": self.mode,
                        "force": self.force,
                    }
                }
            }
        }


def batch_from_run_config(run_config: dict[str, Any]) -> BatchSpec:
    """The batch in a run's config; an empty batch when the first asset was not configured."""
    config = ((run_config or {}).get("ops", {}).get(FIRST_ASSET) or {}).get("config") or {}
    return BatchSpec(
        card_ids=tuple(int(i) for i in config.get("card_ids", [])),
        trigger=config.get("trigger", "manual"),
        mode=config.get("mode", "passive"),
        force=bool(config.get("force", False)),
    )


def default_policy() -> str:
    """The consensus policy of runs that do not name one: `$STAGE_E_CONSENSUS_POLICY`, else `funnel`."""
    return os.environ.get(POLICY_VAR) or "funnel"


def policy_from_run_config(run_config: dict[str, Any]) -> str:
    """The policy `printing_votes` was configured with in this run, else the default."""
    votes = (run_config or {}).get("ops", {}).get("printing_votes") or {}
    return (votes.get("config") or {}).get("policy") or default_policy()
