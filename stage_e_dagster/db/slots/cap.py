"""The OCR slot cap as plain Python: up to N slots per host (or per fleet), each a Postgres session advisory lock.

Oversubscribed OCR is slower than sequential OCR and overloads the host, so a worker takes a slot before it
starts and refuses to start without one. Each acquisition opens its own lock connection
(`db.core.advisory_locks`); the server releases the locks when that session ends, so a slot lives exactly as long as
the worker process that holds it: `kill -9` frees it in milliseconds with no cleanup code, and an orphaned worker
still counts while it runs. When the database cannot be reached acquisition yields no slots: the cap fails closed.

`resources.ocr_slots.OcrSlots` is the Dagster resource that configures a `SlotCap`; OCR worker processes build the
cap from `SlotCap.from_worker_config` without importing Dagster, which keeps a worker's start cheap.
Key layout: see `stage_e_dagster.db.slots.holders`.

A cap carries the database URL (`database_url`), not an engine: every acquisition opens a dedicated lock connection
from it, and a worker process receives it across the process boundary in its config.
"""

from __future__ import annotations

import logging
import os
import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any

import psycopg2

from stage_e_dagster.db.core.advisory_locks import (
    Key,
    LockConnection,
    LockUrlError,
    lock_connection_params,
    open_lock_connection,
    session_lost,
    try_lock,
    unlock,
)
from stage_e_dagster.db.core.urls import redact
from stage_e_dagster.db.slots.holders import MAX_SLOTS, Scope, host_key, slot_key
from stage_e_dagster.host import host_id, usable_cores

logger = logging.getLogger(__name__)

APPLICATION_PREFIX = "stage-e-ocr"
POLL_SECONDS = 0.1  # mean pause between tries while waiting; each pause is jittered +-50%
LOST_CHECK_SECONDS = 0.2  # how often a held slot's lock session is checked when the holder asked to hear of its loss


@dataclass
class SlotCap:
    """`with cap.acquire() as held:` and do OCR only when `held` is non-empty. Fields as on `OcrSlots`."""

    database_url: str
    max_slots: int | None = None
    scope: Scope = "host"
    wait_seconds: float = 0.0
    host_id: str | None = None
    connect_timeout_seconds: int = 5
    _clamp_warned: bool = field(default=False, repr=False, compare=False)

    @property
    def slot_count(self) -> int:
        """The effective cap: `max_slots` (default usable cores) clamped into 1..256, warning once when clamped."""
        wanted = usable_cores() if self.max_slots is None else self.max_slots
        clamped = min(max(wanted, 1), MAX_SLOTS)
        if clamped != wanted and not self._clamp_warned:
            logger.warning("OCR max_slots=%d is outside 1..%d; using %d", wanted, MAX_SLOTS, clamped)
            self._clamp_warned = True
        return clamped

    @property
    def local_workers(self) -> int:
        """OCR workers one batch starts on this host: the cap, and in `global` scope no more than this host's
        usable cores (a fleet-wide cap must not put the whole fleet's workers on one host)."""
        if self.scope == "global":
            return min(self.slot_count, usable_cores())
        return self.slot_count

    @property
    def host_key(self) -> int | None:
        """The 22-bit host hash in this cap's lock keys, or None in global scope."""
        return host_key(self.host_id or host_id()) if self.scope == "host" else None

    def lock_key(self, slot: int) -> tuple[int, int]:
        """The `(key1, key2)` advisory-lock key of slot index `slot` in this cap's scope."""
        return slot_key(slot, self.host_key)

    def worker_config(self) -> dict[str, Any]:
        """The cap's settings as plain values, for rebuilding it inside a worker process (`from_worker_config`)."""
        config = asdict(self)
        config.pop("_clamp_warned")
        return config

    @classmethod
    def from_worker_config(cls, config: dict[str, Any]) -> SlotCap:
        return cls(**config)

    @contextmanager
    def acquire(self, wanted: int = 1, holder: str | None = None,
                on_lost: Callable[[], None] | None = None) -> Iterator[list[int]]:
        """Hold up to `wanted` slots for the body; yields their indexes, or [] when none is free or on error.

        `holder` names the worker in `application_name` (pass the Dagster run id; default: this pid). Slots are
        unlocked and the connection closed when the body ends, whether or not it raised.

        The server frees the slots whenever the lock session ends (`pg_terminate_backend`, a Postgres restart),
        and another worker may take them at once. With `on_lost`, a watcher thread checks the session every
        `LOST_CHECK_SECONDS` while the body runs and calls `on_lost()` (from that thread, once) when it has ended:
        the holder must stop its OCR then, as it holds no slot any more.
        """
        if wanted < 1:
            raise ValueError(f"wanted must be at least 1, got {wanted}")
        count = self.slot_count
        keys = [self.lock_key(slot) for slot in range(count)]
        conn = self._connect(holder)
        if conn is None:
            yield []
            return
        held: list[int] = []
        try:
            try:
                self._take(conn, keys, wanted, held)
            except psycopg2.Error as err:
                logger.warning("OCR slots unavailable: taking a slot failed (%s); running nothing", _first_line(err))
                self._release(conn, keys, held)
            if not held:
                logger.debug("no OCR slot free (%d in %s scope)", count, self.scope)
            watching = _LossWatcher(conn, held, on_lost) if held and on_lost else None
            try:
                yield list(held)
            finally:
                if watching:
                    watching.stop()
        finally:
            try:
                self._release(conn, keys, held)
            finally:
                conn.close()

    # -- steps -------------------------------------------------------------------------------------------------
    def _connect(self, holder: str | None) -> LockConnection | None:
        """A fresh lock connection, or None (logged, password never shown) when it cannot be opened."""
        name = " ".join(part for part in (APPLICATION_PREFIX, holder, f"pid={os.getpid()}") if part)
        try:
            params = lock_connection_params(self.database_url, name, self.connect_timeout_seconds)
        except LockUrlError as err:
            logger.warning("OCR slots unavailable: %s; running nothing", err)
            return None
        try:
            return open_lock_connection(params)
        except psycopg2.Error as err:
            reason = _first_line(err)
            password = params.get("password")
            if password:
                reason = reason.replace(str(password), "***")
            logger.warning("OCR slots unavailable: cannot connect to %s (%s); running nothing",
                           _safe_redact(self.database_url), reason)
            return None

    def _take(self, conn: LockConnection, keys: list[Key], wanted: int, held: list[int]) -> None:
        """Try slots in index order until `wanted` are held; poll with jitter until one frees if waiting is on."""
        deadline = time.monotonic() + max(0.0, self.wait_seconds)
        while True:
            for slot, key in enumerate(keys):
                if len(held) >= wanted:
                    return
                if try_lock(conn, key):
                    held.append(slot)
            remaining = deadline - time.monotonic()
            if held or remaining <= 0:
                return
            time.sleep(min(remaining, POLL_SECONDS * random.uniform(0.5, 1.5)))

    def _release(self, conn: LockConnection, keys: list[Key], held: list[int]) -> None:
        """Unlock every held slot (emptying `held`); a slot reported not held, or a lost connection, is logged."""
        try:
            while held:
                slot = held[0]
                if not unlock(conn, keys[slot]):
                    logger.warning("OCR slot %d was not held at release (key %s)", slot, keys[slot])
                held.pop(0)
        except psycopg2.Error as err:
            logger.warning(
                "lost the OCR slot connection while holding slots %s (%s); the server freed them when it ended",
                held, _first_line(err),
            )
            held.clear()


class _LossWatcher(threading.Thread):
    """Calls `on_lost()` once if the lock session holding `held` ends before `stop()`."""

    def __init__(self, conn: LockConnection, held: list[int], on_lost: Callable[[], None]) -> None:
        super().__init__(daemon=True, name="ocr-slot-watcher")
        self.conn, self.held, self.on_lost = conn, list(held), on_lost
        self.stopping = threading.Event()
        self.start()

    def run(self) -> None:
        while not self.stopping.wait(LOST_CHECK_SECONDS):
            if session_lost(self.conn):
                logger.warning("lost the OCR slot connection: slots %s are free to others; stopping OCR", self.held)
                self.on_lost()
                return

    def stop(self) -> None:
        self.stopping.set()
        if self is not threading.current_thread():
            self.join()


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


def _safe_redact(url: str) -> str:
    try:
        return redact(url)
    except Exception:  # noqa: BLE001 - never echo an unparseable URL
        return "<database_url>"
