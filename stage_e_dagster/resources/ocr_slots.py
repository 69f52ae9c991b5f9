"""The OCR slot cap as a Dagster resource: configuration of a `db.slots.cap.SlotCap`, which does the locking.

Oversubscribed OCR is slower than sequential OCR and overloads the host, so a worker takes a slot (a Postgres
session advisory lock) before it starts and refuses to start without one; see `stage_e_dagster.db.slots.cap`.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

from dagster import ConfigurableResource
from pydantic import Field, PrivateAttr

from stage_e_dagster.db.slots.cap import APPLICATION_PREFIX, LOST_CHECK_SECONDS, POLL_SECONDS, SlotCap
from stage_e_dagster.db.slots.holders import Scope
from stage_e_dagster.host import usable_cores
from stage_e_dagster.resources.database import AppDatabase
from stage_e_dagster.settings import Settings

__all__ = ["APPLICATION_PREFIX", "LOST_CHECK_SECONDS", "POLL_SECONDS", "OcrSlots", "usable_cores"]


class OcrSlots(ConfigurableResource):
    """The OCR slot cap: `with slots.acquire() as held:` and do OCR only when `held` is non-empty.

    Usable from plain Python (`OcrSlots(database=AppDatabase(database_url=...))`) and as a Dagster resource
    (nesting the `database` resource). Every process doing OCR acquires its own slot; never pass a held slot to
    another process. An OCR worker rebuilds the plain `SlotCap` from `worker_config()`, without Dagster.
    """

    database: AppDatabase = Field(description="The application database; all workers must share it.")
    max_slots: int | None = Field(
        default=None, description="How many OCR workers may run at once per scope; default usable cores (CPUs - 1)."
    )
    scope: Scope = Field(default="host", description="`host`: slots per host; `global`: one set for the fleet.")
    wait_seconds: float = Field(
        default=0.0, description="0: try once and never block; above 0: poll with jitter up to this long."
    )
    host_id: str | None = Field(
        default=None, description="The host identity of `host` scope (default: machine id, else hostname)."
    )
    connect_timeout_seconds: int = Field(default=5, description="Give up opening the lock connection after this.")

    _cap: SlotCap | None = PrivateAttr(default=None)

    @property
    def cap(self) -> SlotCap:
        """The plain slot cap this resource configures (built once, so a clamp warning is given once)."""
        if self._cap is None:
            self._cap = SlotCap(database_url=self.database.database_url, max_slots=self.max_slots, scope=self.scope,
                                wait_seconds=self.wait_seconds, host_id=self.host_id,
                                connect_timeout_seconds=self.connect_timeout_seconds)
        return self._cap

    @classmethod
    def from_settings(cls, settings: Settings, database: AppDatabase) -> OcrSlots:
        """The slots `settings` configure (cap, scope, host id, wait) on `database`: what every run uses."""
        return cls(database=database, max_slots=settings.ocr_max_slots, scope=settings.ocr_slot_scope,
                   host_id=settings.ocr_host_id, wait_seconds=settings.ocr_wait_seconds)

    @classmethod
    def from_worker_config(cls, config: dict[str, Any]) -> OcrSlots:
        fields = dict(config)
        return cls(database=AppDatabase(database_url=fields.pop("database_url")), **fields)

    @property
    def slot_count(self) -> int:
        """The effective cap: `max_slots` (default usable cores) clamped into 1..256, warning once when clamped."""
        return self.cap.slot_count

    @property
    def local_workers(self) -> int:
        """OCR workers one batch starts on this host (see `SlotCap.local_workers`)."""
        return self.cap.local_workers

    @property
    def host_key(self) -> int | None:
        """The 22-bit host hash in this resource's lock keys, or None in global scope."""
        return self.cap.host_key

    def lock_key(self, slot: int) -> tuple[int, int]:
        """The `(key1, key2)` advisory-lock key of slot index `slot` in this resource's scope."""
        return self.cap.lock_key(slot)

    def worker_config(self) -> dict[str, Any]:
        """This resource's resolved settings, for rebuilding the cap inside a worker process
        (`SlotCap.from_worker_config`)."""
        return self.cap.worker_config()

    def acquire(self, wanted: int = 1, holder: str | None = None,
                on_lost: Callable[[], None] | None = None) -> AbstractContextManager[list[int]]:
        """`SlotCap.acquire`: hold up to `wanted` slots for the body; yields their indexes, or [] when none is free
        or on error; `on_lost` hears of a lock session that ended under the body."""
        return self.cap.acquire(wanted, holder=holder, on_lost=on_lost)


