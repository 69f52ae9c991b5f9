"""The `card_sources` asset: the `card` table brought in line with the registered sources.

A thin shell over `control.intake.sync_source` (`db.intake.ingest` for directories, `remote.listing` for S3
prefixes and HTTP manifests): new files become cards, changed files get their new
fingerprint (and so fresh work), vanished files are marked missing; a remote object's bytes are fetched later, at
Stage C. Requested by the `source_inbox`
sensor when a directory's listing changed (a quick sync) and by the daily `source_resync` schedule (a full sync). A
source whose directory is missing is reported, never emptied."""

# No `from __future__ import annotations`: Dagster resolves config and resource annotations at runtime.
from typing import Any

from dagster import (
    AssetExecutionContext,
    Config,
    MaterializeResult,
    MetadataValue,
    TableColumn,
    TableRecord,
    TableSchema,
    asset,
)
from pydantic import Field

from stage_e_dagster.control.intake import sync_source
from stage_e_dagster.db.intake.sources import SourceSync, list_sources
from stage_e_dagster.job_contracts import CARD_SOURCES
from stage_e_dagster.resources.database import AppDatabase

COUNTS = ("new", "changed", "unchanged", "vanished", "unreadable", "refused")
PROBLEMS_SHOWN = 20
_TABLE = TableSchema(columns=[
    TableColumn("source", "string"), TableColumn("status", "string"), TableColumn("location", "string"),
    *(TableColumn(name, "int") for name in COUNTS), TableColumn("seconds", "float"),
])


class CardSourcesConfig(Config):
    """Which sources to sync (none named: every registered source), and whether to re-read every file."""

    source_keys: list[str] = Field(default_factory=list, description="Source keys; empty: every source.")
    full: bool = Field(default=False, description="Re-read every file, not only those changed since the last sync.")


def _count(sync: SourceSync, name: str) -> int:
    value = getattr(sync.summary, name)
    return len(value) if isinstance(value, list) else int(value)


def sources_metadata(syncs: list[SourceSync], seconds: float) -> dict[str, Any]:
    """Materialization metadata: totals under stable numeric keys (plotted over time), a table per source, and the
    files that could not be taken in."""
    totals = {name: sum(_count(s, name) for s in syncs) for name in COUNTS}
    read = sum(_count(s, "new") + _count(s, "changed") + _count(s, "unchanged") - s.summary.trusted for s in syncs
               if s.kind == "directory")
    metadata: dict[str, Any] = {name: MetadataValue.int(value) for name, value in totals.items()}
    metadata["sources_synced"] = MetadataValue.int(sum(s.status == "synced" for s in syncs))
    metadata["sources_unavailable"] = MetadataValue.int(sum(s.status == "unavailable" for s in syncs))
    metadata["remote_listed"] = MetadataValue.int(sum(_count(s, name) for s in syncs if s.kind != "directory"
                                                      for name in ("new", "changed", "unchanged")))
    metadata["files_read"] = MetadataValue.int(read)
    metadata["elapsed_seconds"] = MetadataValue.float(round(seconds, 3))
    metadata["sources"] = MetadataValue.table(
        [TableRecord({"source": s.key, "status": s.status, "location": s.location,
                      **{name: _count(s, name) for name in COUNTS}, "seconds": float(s.seconds)}) for s in syncs],
        schema=_TABLE,
    )
    problems = [f"- `{s.key}`: {what} `{name}`" for s in syncs for what, names in (
        ("unreadable image", s.summary.unreadable), ("refused", [f"{i} ({why})" for i, why in s.summary.refused]),
        ("vanished", s.summary.vanished)) for name in names]
    if problems:
        shown = problems[:PROBLEMS_SHOWN]
        more = len(problems) - len(shown)
        metadata["problems"] = MetadataValue.md("\n".join(shown) + (f"\n\n... and {more} more" if more else ""))
    return metadata


@asset(key=CARD_SOURCES, group_name="sources", description=__doc__)
def card_sources(context: AssetExecutionContext, config: CardSourcesConfig, database: AppDatabase
                 ) -> MaterializeResult:
    engine = database.engine
    with engine.connect() as conn:
        sources = list_sources(conn, config.source_keys or None)
    unknown = sorted(set(config.source_keys) - {s.key for s in sources})
    if unknown:
        context.log.warning(f"no source registered as {', '.join(unknown)} (stage-e sources add DIR --key K)")
    syncs = []
    for source in sources:
        sync = sync_source(engine, source, full=config.full)
        if sync.status == "unavailable":
            why = sync.detail or "missing or unreadable"
            context.log.warning(f"source {source.key}: {source.location}: {why}; left as it was")
        else:
            context.log.info(f"source {source.key}: {sync.summary.line()} ({'full' if config.full else 'quick'})")
        syncs.append(sync)
    return MaterializeResult(metadata=sources_metadata(syncs, sum(s.seconds for s in syncs)))
