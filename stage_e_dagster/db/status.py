"""One read of the whole pipeline's state for `stage-e status`: cards, backlog, batches, trips, review, slots."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import text

from stage_e_dagster.db import ledger, trips
from stage_e_dagster.db.engine import get_engine
from stage_e_dagster.db.review import review_queue_size
from stage_e_dagster.db.slot_holders import list_slot_holders
from stage_e_dagster.db.stream import backlog


@dataclass(frozen=True)
class PipelineStatus:
    cards: dict[str, int]
    backlog: dict[str, int]
    batches: dict[str, int]
    recent: list[ledger.LedgerRow]
    open_trips: list[trips.Trip]
    review_queue: int
    slots_held: int


def pipeline_status(url: str, recent: int = 5) -> PipelineStatus:
    with get_engine(url).connect() as conn:
        cards = dict(conn.execute(text(
            "SELECT CASE WHEN missing_since IS NOT NULL THEN 'missing' ELSE printing_status END, count(*) "
            "FROM card GROUP BY 1")).all())
        batches = dict(conn.execute(text("SELECT status, count(*) FROM dispatch_ledger GROUP BY 1")).all())
        queue = review_queue_size(conn)
    return PipelineStatus(
        cards={k: int(v) for k, v in cards.items()},
        backlog=backlog(url),
        batches={k: int(v) for k, v in batches.items()},
        recent=ledger.recent(url, recent),
        open_trips=trips.open_trips(url),
        review_queue=queue,
        slots_held=len(list_slot_holders(url)),
    )


def format_status(status: PipelineStatus) -> str:
    def counts(values: dict[str, int]) -> str:
        return ", ".join(f"{count} {name}" for name, count in sorted(values.items())) or "none"

    lines = [
        f"cards:    {sum(status.cards.values())} ({counts(status.cards)})",
        f"backlog:  {status.backlog['stage_c']} need evidence (C), {status.backlog['stage_d']} need votes (D), "
        f"{status.backlog['waiting']} of them waiting to retry; {status.backlog['in_running_batches']} in running "
        "batches",
        f"batches:  {counts(status.batches)}",
        f"review:   {status.review_queue} cards await a human",
        f"slots:    {status.slots_held} OCR slots held",
    ]
    if status.open_trips:
        first = status.open_trips[0]
        lines.append(f"HALTED:   {len(status.open_trips)} open envelope trip(s), first {first.id} ({first.bar}); "
                     "acknowledge with `stage-e trips ack`")
    else:
        lines.append("stream:   open (no envelope trip)")
    for row in status.recent:
        took = f"{(row.finished_at - row.started_at).total_seconds():.1f}s" if row.finished_at else "-"
        reason = f"  {row.failure_reason[:70]}" if row.failure_reason else ""
        lines.append(f"  {row.started_at:%Y-%m-%d %H:%M:%S}  {row.run_id[:8]}  {row.trigger:14s} {row.status:9s} "
                     f"{len(row.card_ids):4d} cards  {took}{reason}")
    return "\n".join(lines)
