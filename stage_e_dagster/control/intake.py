"""What the stream takes in, and where: a changed source directory is synced in the stream's own step.

`sync_changed` lists every local source directory (names, sizes, file times; no file is read) and compares each
listing with the one its last sync started from. A changed source whose quick sync reads at most `read_limit` files
is synced right there, so a dropped scan becomes a card without a run of its own; a bigger change (a first sync, a
large copy) is left to a `sync_sources` run and returned as `too_big`. It is idempotent and cheap when nothing
changed (one `stat` per file), and two callers take turns on the source's lock, so the `source_inbox` sensor and a
draining run can both call it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import Engine

from stage_e_dagster.db.intake.sources import SourceSync, list_sources, sync_source, trusted_before
from stage_e_dagster.domain.scan_files import Listing, list_images


@dataclass
class Intake:
    """One look at the local sources: what was synced here, what is too big for here, what is unavailable."""

    synced: list[SourceSync] = field(default_factory=list)
    too_big: dict[str, str] = field(default_factory=dict)  # source key -> listing digest, for a sync run
    unavailable: list[str] = field(default_factory=list)
    unchanged: int = 0

    @property
    def files_read(self) -> int:
        """Files the syncs here read (the new and changed ones; trusted files cost no read)."""
        return sum(s.summary.new + s.summary.changed + s.summary.unchanged - s.summary.trusted for s in self.synced)

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
