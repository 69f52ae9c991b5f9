"""What the stream takes in, and where: a changed source directory is synced in the stream's own step, and remote
sources are listed in the `source_inbox` tick. `sync_source` is the one entry point that syncs a source of any kind
(the `card_sources` asset, `stage-e sources sync`, `stage-e ingest` and the two below): a directory through
`db.intake.sources`, a remote source by its listing on the wire (`remote.listing`).

`sync_changed` lists every local source directory (names, sizes, file times; no file is read) and compares each
listing with the one its last sync started from. A changed source whose quick sync reads at most `read_limit` files
is synced right there, so a dropped scan becomes a card without a run of its own; a bigger change (a first sync, a
large copy) is left to a `sync_sources` run and returned as `too_big`. It is idempotent and cheap when nothing
changed (one `stat` per file), and two callers take turns on the source's lock, so the `source_inbox` sensor and a
draining run can both call it.

`sync_remote_due` lists the remote sources (S3 prefixes, HTTP manifests) whose listing is due (a pass under way, or
the last one started `interval_seconds` ago), within `budget_seconds` for them all: an S3 pass resumes from its
cursor at the next tick, a manifest not read in time is returned as `too_big` for a `sync_sources` run. It never
runs inside a draining run's every-second watch: a listing costs requests to someone else's store.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import Engine

from stage_e_dagster.db.intake.remote_sync import due
from stage_e_dagster.db.intake.sources import SourceRow, SourceSync, list_sources, sync_directory, trusted_before
from stage_e_dagster.domain.scan_files import Listing, list_images
from stage_e_dagster.remote.listing import Opener, sync_remote


def sync_source(engine: Engine, source: SourceRow, *, full: bool = False,
                on_file: Callable[[str], None] | None = None) -> SourceSync:
    """Bring `source`'s cards in line with it, to the end: a directory with its files (`on_file` per file seen), a
    remote source with its listing (no budget: a pass under way is finished)."""
    if source.remote:
        return sync_remote(engine, source, full=full)
    return sync_directory(engine, source, full=full, on_file=on_file)


@dataclass
class Intake:
    """One look at the local sources: what was synced here, what is too big for here, what is unavailable."""

    synced: list[SourceSync] = field(default_factory=list)
    too_big: dict[str, str] = field(default_factory=dict)  # source key -> listing digest, for a sync run
    unavailable: list[str] = field(default_factory=list)
    unchanged: int = 0

    @property
    def files_read(self) -> int:
        """Files the syncs here read (the new and changed ones; trusted files and remote listings cost no read)."""
        return sum(s.summary.new + s.summary.changed + s.summary.unchanged - s.summary.trusted for s in self.synced
                   if s.kind == "directory")

    def merge(self, other: Intake) -> Intake:
        return Intake(self.synced + other.synced, {**self.too_big, **other.too_big},
                      self.unavailable + other.unavailable, self.unchanged + other.unchanged)

    @property
    def new_cards(self) -> int:
        """Cards the syncs here added or gave new bytes (each is owed Stage C now)."""
        return sum(s.summary.new + s.summary.changed for s in self.synced)

    def describe(self) -> str:
        parts = []
        if self.synced:
            parts.append("synced " + ", ".join(f"{s.key} ({s.summary.line()})" for s in self.synced))
        if self.too_big:
            parts.append("too big to sync here: " + ", ".join(sorted(self.too_big)))
        if self.unavailable:
            parts.append("unavailable: " + ", ".join(self.unavailable))
        parts.append(f"{self.unchanged} source(s) unchanged")
        return "; ".join(parts)


def sync_changed(engine: Engine, read_limit: int,
                 list_dir: Callable[[Path, float | None], Listing | None] = list_images) -> Intake:
    """Sync every changed local source whose quick sync reads at most `read_limit` files (see the module docstring)."""
    with engine.connect() as conn:
        sources = [s for s in list_sources(conn) if s.kind == "directory"]
    intake = Intake()
    for source in sources:
        listing = list_dir(Path(source.location), trusted_before(source))
        if listing is None:
            intake.unavailable.append(source.key)
        elif listing.digest == source.synced_listing:
            intake.unchanged += 1
        elif listing.changed > read_limit:
            intake.too_big[source.key] = listing.digest
        else:
            synced = sync_source(engine, source)
            if synced.status == "unavailable":
                intake.unavailable.append(source.key)
            else:
                intake.synced.append(synced)
    return intake


def sync_remote_due(engine: Engine, budget_seconds: float, interval_seconds: float,
                    open_store: Opener | None = None, now: datetime | None = None) -> Intake:
    """List the remote sources that are due, within `budget_seconds` in all (see the module docstring)."""
    deadline = time.monotonic() + budget_seconds
    moment = now or datetime.now(UTC)
    with engine.connect() as conn:
        sources = [s for s in list_sources(conn) if s.remote]
    intake = Intake()
    for source in sources:
        left = deadline - time.monotonic()
        if not due(source.synced_at, source.list_cursor, interval_seconds, moment) or left <= 0:
            intake.unchanged += 1
            continue
        kwargs = {} if open_store is None else {"open_store": open_store}
        synced = sync_remote(engine, source, budget_seconds=left, **kwargs)
        if synced.status == "unavailable":
            intake.unavailable.append(f"{source.key} ({synced.detail})")
        elif synced.status == "too_big":
            intake.too_big[source.key] = "manifest"
            intake.synced.append(synced)
        elif synced.status == "busy":
            intake.unchanged += 1
        else:
            intake.synced.append(synced)
    return intake
