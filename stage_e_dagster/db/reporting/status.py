"""One read of the whole pipeline's state for `stage-e status`: cards, backlog, batches, trips, review, slots.

`format_status` renders it for people and `status_document` as one JSON document for scripts (its keys are a
contract, documented in the README). What each count costs: the backlog and the funnel's "new" and "awaiting votes"
read the work queue (as small as the work); the ledger and trip counts read tables that grow with batches and trips.
Four counts read in proportion to the catalogue of scans: cards by state (one pass over `card`), "with a machine
vote" (one pass over the machine votes), the review queue (every card ever routed to review, joined to `card`) and
the cards no machine may vote on by reason (a pass over `card` and one over `image_evidence`, see `_INELIGIBLE`).
At 1M cards they make the whole read take seconds, not milliseconds (docs/performance.md, "Scale"): fine for a
command an operator runs, not for something polled every second.

`pipeline_status` takes an engine: the counts are read on one of its connections, and the OCR slot holders on a
dedicated connection to the engine's database (`db.slots.holders.list_slot_holders`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Engine, text

from stage_e_dagster.db.review.queue import review_queue_size
from stage_e_dagster.db.runs import ledger, trips
from stage_e_dagster.db.slots.holders import SlotHolder, list_slot_holders
from stage_e_dagster.db.work.queue import backlog
from stage_e_dagster.domain.calculators import MACHINE_PREFIX
from stage_e_dagster.domain.kinds import REASONS

LEDGER_STATUSES = ("running", "completed", "throttled", "halted", "failed")
CONSENSUS_STATES = ("unresolved", "resolved", "no_match", "missing")


@dataclass(frozen=True)
class PipelineStatus:
    cards: dict[str, int]
    """By consensus state: unresolved / resolved / no_match, and `missing` (file vanished) whatever the state."""
    backlog: dict[str, int]
    batches: dict[str, int]
    recent: list[ledger.LedgerRow]
    open_trips: list[trips.Trip]
    review_queue: int
    slots_held: int
    funnel: dict[str, int] = field(default_factory=dict)
    """`new` (owed Stage C), `awaiting_votes` (owed Stage D), `with_machine_vote` (cards holding a machine vote)."""
    slot_holders: list[SlotHolder] = field(default_factory=list)
    ineligible: dict[str, int] = field(default_factory=dict)
    """Present cards no machine may vote on, by the work rule's reason (`card_ineligibility`)."""
    fetch: dict[str, Any] = field(default_factory=dict)
    """Remote sources: the shared pace, remote cards by fetch state, and the fetch outcomes of the last hour."""


_CARDS = ("SELECT CASE WHEN missing_since IS NOT NULL THEN 'missing' ELSE printing_status END, count(*) "
          "FROM card GROUP BY 1")
_FUNNEL = (
    "SELECT (SELECT count(*) FROM card_work WHERE stage = 'C') AS new, "
    "(SELECT count(*) FROM card_work WHERE stage = 'D') AS awaiting_votes, "
    "(SELECT count(DISTINCT card_id) FROM card_printing_tag WHERE anonymous_id LIKE :machine) AS with_machine_vote"
)

_INELIGIBLE = """
SELECT reason, count(*) FROM (
    SELECT eligibility_reason(c.kind, c.tags, c.language, e.width, e.height, r.min_dpi, r.english_match) AS reason
    FROM card AS c CROSS JOIN work_rule AS r
    LEFT JOIN (SELECT s.card_id, s.content_sha256, s.extractor_versions, s.width, s.height
               FROM image_evidence AS s CROSS JOIN work_rule AS w
               WHERE eligibility_reason('card', '{}', NULL, s.width, s.height, w.min_dpi, true) = 'low-dpi') AS e
        ON e.card_id = c.id AND e.content_sha256 = c.content_sha256 AND e.extractor_versions @> r.current_versions
    WHERE c.missing_since IS NULL) AS judged
WHERE reason IS NOT NULL GROUP BY reason
"""
"""The work rule's eligibility (`eligibility_reason`, `rule.sql`) over every present card. Only the pixel size comes
from evidence, and only a size under the floor can give a reason, so the join takes just the evidence rows the same
rule finds under the floor: one pass over `card` and one over `image_evidence`, joined on the few small scans,
instead of a join of the two whole tables."""


_REMOTE_CARDS = (
    "SELECT CASE WHEN missing_since IS NOT NULL THEN 'missing' WHEN fetch_failed IS NOT NULL THEN fetch_failed "
    "WHEN content_verified THEN 'fetched' ELSE 'not_fetched' END, count(*) FROM card "
    "WHERE remote_token IS NOT NULL GROUP BY 1"
)
_FETCH_OUTCOMES = (
    "SELECT f.key, sum(CAST(f.value AS bigint)) FROM dispatch_ledger AS l, "
    "jsonb_each_text(coalesce(l.counters -> 'stage_c' -> 'fetch', '{}'::jsonb)) AS f "
    "WHERE l.started_at > now() - interval '1 hour' AND f.value ~ '^[0-9]+$' GROUP BY 1"
)


def fetch_status(conn) -> dict[str, Any]:
    """The shared fetch pace, remote cards by fetch state, and the fetch outcomes of the last hour's batches."""
    from stage_e_dagster.db.intake.pace import read_pace

    pace = read_pace(conn)
    cards = {str(k): int(v) for k, v in conn.execute(text(_REMOTE_CARDS)).all()}
    outcomes = {str(k): int(v) for k, v in conn.execute(text(_FETCH_OUTCOMES)).all()}
    hosts = conn.execute(text("SELECT host FROM fetch_host WHERE forbidden_streak > 0 ORDER BY host")).scalars().all()
    locked = conn.execute(text(
        "SELECT DISTINCT s.key FROM fetch_host h JOIN card c ON c.id = ANY(h.forbidden_cards) "
        "JOIN source s ON s.id = c.source_id WHERE h.forbidden_streak > 0 ORDER BY s.key")).scalars().all()
    return {"pace_factor": pace.factor, "halvings": pace.halvings, "remote_cards": cards,
            "outcomes_last_hour": outcomes, "sources_answering_403": list(locked), "hosts_answering_403": list(hosts)}


def pipeline_status(engine: Engine, recent: int = 5) -> PipelineStatus:
    with engine.connect() as conn:
        cards = dict(conn.execute(text(_CARDS)).all())
        batches = dict(conn.execute(text("SELECT status, count(*) FROM dispatch_ledger GROUP BY 1")).all())
        queue = review_queue_size(conn)
        funnel = conn.execute(text(_FUNNEL), {"machine": MACHINE_PREFIX + "%"}).one()._mapping
        work = backlog(conn)
        latest = ledger.recent(conn, recent)
        open_trips = trips.open_trips(conn)
        ineligible = dict(conn.execute(text(_INELIGIBLE)).all())
        fetch = fetch_status(conn)
    holders = list_slot_holders(engine.url)
    return PipelineStatus(
        cards={k: int(v) for k, v in cards.items()},
        backlog=work,
        batches={k: int(v) for k, v in batches.items()},
        recent=latest,
        open_trips=open_trips,
        review_queue=queue,
        slots_held=len(holders),
        funnel={k: int(v) for k, v in funnel.items()},
        slot_holders=holders,
        ineligible={reason: int(ineligible.get(reason, 0)) for reason in REASONS},
        fetch=fetch,
    )


def card_states(status: PipelineStatus) -> dict[str, int]:
    """Cards by state, every key present: `total`; the funnel (`new`, `evidenced`, `awaiting_votes`,
    `with_machine_vote`, `in_review`); the consensus (`unresolved`, `resolved`, `no_match`) and `missing`."""
    total = sum(status.cards.values())
    present = total - status.cards.get("missing", 0)
    new = status.funnel.get("new", 0)
    states = {"total": total, "new": new, "evidenced": max(0, present - new),
              "awaiting_votes": status.funnel.get("awaiting_votes", 0),
              "with_machine_vote": status.funnel.get("with_machine_vote", 0), "in_review": status.review_queue}
    states.update({state: status.cards.get(state, 0) for state in CONSENSUS_STATES})
    return states


def format_status(status: PipelineStatus) -> str:
    def counts(values: dict[str, int]) -> str:
        return ", ".join(f"{count} {name}" for name, count in sorted(values.items())) or "none"

    states = card_states(status)
    lines = [
        f"cards:    {states['total']} ({counts(status.cards)})",
        f"funnel:   {states['new']} new, {states['evidenced']} evidenced, {states['awaiting_votes']} awaiting votes, "
        f"{states['with_machine_vote']} with a machine vote, {states['in_review']} in review, "
        f"{states['resolved']} resolved, {states['no_match']} no match",
        f"backlog:  {status.backlog['stage_c']} need evidence (C), {status.backlog['stage_d']} need votes (D), "
        f"{status.backlog['waiting']} of them waiting to retry; {status.backlog['in_running_batches']} in running "
        "batches",
        f"batches:  {counts(status.batches)}",
        f"review:   {status.review_queue} cards await a human",
        f"no vote:  {counts({r: n for r, n in status.ineligible.items() if n})} (cards no machine may vote on, by "
        "reason)",
        f"slots:    {status.slots_held} OCR slots held",
    ]
    if status.fetch.get("remote_cards") or status.fetch.get("outcomes_last_hour"):
        fetch = status.fetch
        lines.append(f"fetch:    pace {fetch['pace_factor']:g} x the rate ({fetch['halvings']} halvings so far); "
                     f"remote cards {counts(fetch['remote_cards'])}; last hour {counts(fetch['outcomes_last_hour'])}")
    if status.open_trips:
        first = status.open_trips[0]
        source = f", {first.names}" if first.names else ""
        lines.append(f"HALTED:   {len(status.open_trips)} open envelope trip(s), first {first.id} "
                     f"({first.bar}{source}); acknowledge with `stage-e trips ack`")
    else:
        lines.append("stream:   open (no envelope trip)")
    for row in status.recent:
        took = f"{(row.finished_at - row.started_at).total_seconds():.1f}s" if row.finished_at else "-"
        reason = f"  {row.failure_reason[:70]}" if row.failure_reason else ""
        lines.append(f"  {row.started_at:%Y-%m-%d %H:%M:%S}  {row.run_id[:8]}  {row.trigger:14s} {row.status:9s} "
                     f"{len(row.card_ids):4d} cards  {took}{reason}")
    return "\n".join(lines)


def _time(moment: datetime | None) -> str | None:
    return None if moment is None else moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def status_document(status: PipelineStatus, queue: dict[str, Any], reclaimed: list[str] | None = None,
                    now: datetime | None = None) -> dict[str, Any]:
    """The status as one JSON-ready document (`stage-e status --json`); every key is always present."""
    now = now or datetime.now(UTC)
    return {
        "generated_at": _time(now),
        "cards": card_states(status),
        "backlog": {key: int(status.backlog.get(key, 0))
                    for key in ("stage_c", "stage_d", "waiting", "in_running_batches")},
        "ledger": {
            "by_status": {name: status.batches.get(name, 0) for name in LEDGER_STATUSES},
            "recent": [{
                "run_id": row.run_id, "trigger": row.trigger, "mode": row.mode, "status": row.status,
                "cards": len(row.card_ids), "started_at": _time(row.started_at), "finished_at": _time(row.finished_at),
                "seconds": round((row.finished_at - row.started_at).total_seconds(), 1) if row.finished_at else None,
                "failure_reason": row.failure_reason,
            } for row in status.recent],
        },
        "trips": {
            "halted": bool(status.open_trips),
            "open": [{
                "id": trip.id, "bar": trip.bar, "observed": trip.observed, "ceiling": trip.ceiling,
                "run_id": trip.run_id, "tripped_at": _time(trip.tripped_at),
                "source": (trip.detail or {}).get("source"), "host": (trip.detail or {}).get("host"),
                "open_seconds": round((now - trip.tripped_at).total_seconds()),
            } for trip in status.open_trips],
        },
        "slots": {
            "held": status.slots_held,
            "holders": [{"slot": h.slot, "scope": h.scope, "backend_pid": h.pid, "holder": h.application_name,
                         "since": _time(h.since)} for h in status.slot_holders],
        },
        "queue": {key: queue.get(key) for key in ("reachable", "queued", "started", "error")},
        "fetch": {"pace_factor": status.fetch.get("pace_factor", 1.0), "halvings": status.fetch.get("halvings", 0),
                  "remote_cards": dict(status.fetch.get("remote_cards", {})),
                  "outcomes_last_hour": dict(status.fetch.get("outcomes_last_hour", {})),
                  "sources_answering_403": list(status.fetch.get("sources_answering_403", [])),
                  "hosts_answering_403": list(status.fetch.get("hosts_answering_403", []))},
        "reclaimed": list(reclaimed or []),
        "ineligible": {reason: int(status.ineligible.get(reason, 0)) for reason in REASONS},
    }
