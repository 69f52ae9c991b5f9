"""The job contracts: every job's name, the stage assets' keys, the batch a `micro_batch` run works on (`BatchSpec`,
its run config and its parsing back), the sources a `sync_sources` run syncs (`SyncSpec`), and the runs' tags.

The bottom of the orchestration layers: it imports no job, asset or op, so the assets, ops, control and sensors that
start, read or target a run all import it and nothing here imports them (the jobs themselves are in `jobs.py`,
above the assets and ops). Card ids travel in run config, never in tags (a long tag value fails run creation on
Postgres storage); the run config configures the first asset, and the other assets read the same batch from
`context.run.run_config`, so one RunRequest configures the whole job.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dagster import AssetKey

MICRO_BATCH = "micro_batch"
IMAGE_EVIDENCE = AssetKey("image_evidence")
PRINTING_VOTES = AssetKey("printing_votes")
DISPATCH_OUTCOME = AssetKey("dispatch_outcome")
STAGE_ASSETS = (IMAGE_EVIDENCE, PRINTING_VOTES, DISPATCH_OUTCOME)
"""Stage C, D and E, in the order a run materialises them."""

TRIGGERS = ("card-event", "backstop-sweep", "manual", "bulk")
MODES = ("passive", "bulk")

TAG_JOB = "stage_e/job"
TAG_TRIGGER = "stage_e/trigger"
TAG_MODE = "stage_e/mode"
TAG_BATCH_SIZE = "stage_e/batch_size"
TAG_FIRST_CARD = "stage_e/first_card"
TAG_LAST_CARD = "stage_e/last_card"

STREAM_DRAIN = "stream_drain"
TAG_DRAIN_RUN = "stage_e/drain_run"
"""On a micro_batch run started by a draining run: that run's id."""
TAG_OWNER = "stage_e/owner"
"""On a draining run, added once it runs: its process (`host.process_owner`), so the reaper can tell that it died
where Dagster could not record it."""

SYNC_SOURCES = "sync_sources"
CARD_SOURCES = AssetKey("card_sources")
TAG_SOURCES = "stage_e/sources"
TAG_SYNC = "stage_e/sync"
INVARIANT_CHECKS = "invariant_checks"


@dataclass(frozen=True)
class BatchSpec:
    """What a micro-batch run processes and why it was started."""

    card_ids: tuple[int, ...]
    trigger: str = "manual"
    mode: str = "passive"
    force: bool = False
    trip_override: str | None = None  # bulk only: the operator's note for running although a trip is open

    def run_config(self) -> dict[str, Any]:
        """Run config that hands this batch to the `micro_batch` job."""
        config: dict[str, Any] = {"card_ids": list(self.card_ids), "trigger": self.trigger, "mode": self.mode,
                                  "force": self.force}
        if self.trip_override:
            config["trip_override"] = self.trip_override
        return {"ops": {IMAGE_EVIDENCE.path[-1]: {"config": config}}}

    def tags(self) -> dict[str, str]:
        """The run's short tags (see `batch_tags`)."""
        return batch_tags(self.trigger, self.mode, self.card_ids)


def batch_from_run_config(run_config: dict[str, Any]) -> BatchSpec:
    """The batch in a run's config; an empty batch when the first asset was not configured."""
    config = ((run_config or {}).get("ops", {}).get(IMAGE_EVIDENCE.path[-1]) or {}).get("config") or {}
    return BatchSpec(
        card_ids=tuple(int(i) for i in config.get("card_ids", [])),
        trigger=config.get("trigger", "manual"),
        mode=config.get("mode", "passive"),
        force=bool(config.get("force", False)),
        trip_override=config.get("trip_override"),
    )


def batch_tags(trigger: str, mode: str, card_ids: Sequence[int]) -> dict[str, str]:
    """Short run tags describing a batch, to find it in the UI; the id list itself travels in run config."""
    if not card_ids:
        raise ValueError("a batch has at least one card")
    return {
        TAG_TRIGGER: trigger,
        TAG_MODE: mode,
        TAG_BATCH_SIZE: str(len(card_ids)),
        TAG_FIRST_CARD: str(card_ids[0]),
        TAG_LAST_CARD: str(card_ids[-1]),
    }


@dataclass(frozen=True)
class SyncSpec:
    """Which sources a `sync_sources` run brings in line with their directories (none named: every source), and
    whether it reads every file (`full`) or only the files that changed since the previous sync."""

    source_keys: tuple[str, ...] = ()
    full: bool = False

    def run_config(self) -> dict[str, Any]:
        config = {"source_keys": list(self.source_keys), "full": self.full}
        return {"ops": {CARD_SOURCES.path[-1]: {"config": config}}}

    def tags(self) -> dict[str, str]:
        named = ",".join(self.source_keys) or "*"
        return {TAG_SOURCES: named if len(named) <= 200 else named[:197] + "...",
                TAG_SYNC: "full" if self.full else "quick"}
