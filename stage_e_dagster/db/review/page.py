"""The review page's queries: which cards await a person, everything shown for one card, and the vote check.

Under the `funnel` policy every card needs a person, so the page's queue is wider than `db.review.queue`'s: a card
*awaits a person* while it is unresolved, its file is present, Stage C and Stage D have finished with its current
bytes, and Stage D has seen it (it holds machine votes or a `to-review` marker). Cards the slow path routed
without a confident machine hit are flagged `routed` (they are `db.review.queue`'s queue); the others wait for a person
to confirm the machine's pick. A reviewer's own queue leaves out the cards they already voted on, so one person
can clear it even while a card still needs a second opinion from someone else.

Every entry carries a `version` (the card's bytes, its newest machine vote, its newest review marker): what the
reviewer saw. A vote sent with an older version is stale and refused.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from sqlalchemy import Connection, TextClause, text

from stage_e_dagster.db.arrays import int_array, text_array
from stage_e_dagster.db.judgement.consensus_store import card_votes
from stage_e_dagster.db.judgement.identity_groups import copies_of
from stage_e_dagster.db.judgement.stage_d_inputs import load_candidates, load_current_evidence
from stage_e_dagster.db.judgement.votes import VoteCheck, VoteError
from stage_e_dagster.db.review.queue import machine_hit_sql
from stage_e_dagster.domain.calculators import CALCULATORS, MACHINE_PREFIX, SLOW_PATH_ID, TO_REVIEW
from stage_e_dagster.domain.consensus import MACHINE_SOURCE, resolve
from stage_e_dagster.domain.review_card import (
    Candidate,
    CardView,
    HumanVote,
    MachinePick,
    order_candidates,
    printing_labels,
    symbol_distance,
)
from stage_e_dagster.domain.work import STAGE_C_ID

_ENTRY = """
SELECT c.id AS card_id, c.identifier, c.name, c.name_normalised, c.expansion_hint, c.printing_status,
       c.resolved_printing_id, c.missing_since IS NOT NULL AS missing, c.content_sha256,
       (w.needs_c OR w.needs_d) AS pending,
       (m.marker_id IS NOT NULL OR mv.votes > 0) AS seen,
       (m.marker_id IS NOT NULL AND NOT coalesce(mv.hit, false)) AS routed,
       left(c.content_sha256, 16) || '.' || coalesce(mv.last_vote_id, 0) || '.' || coalesce(m.marker_id, 0)
           AS version,
       m.detail AS marker_detail, rc.reviewer AS claimed_by, w.voted_by_reviewer
FROM card AS c
CROSS JOIN LATERAL (  -- OFFSET 0 keeps these per-card index probes, instead of scans of whole tables
    SELECT {needs_c} AS needs_c, {needs_d} AS needs_d,
           EXISTS (SELECT 1 FROM card_printing_tag AS h WHERE h.card_id = c.id AND h.anonymous_id = :reviewer)
               AS voted_by_reviewer
    OFFSET 0) AS w
LEFT JOIN LATERAL (
    SELECT l.id AS marker_id, l.detail FROM card_scan_log AS l
    WHERE l.card_id = c.id AND l.anonymous_id = :slow_path AND l.skip_reason = :to_review
    ORDER BY l.id DESC LIMIT 1) AS m ON TRUE
LEFT JOIN LATERAL (
    SELECT max(t.id) AS last_vote_id, count(*) AS votes, bool_or(NOT t.is_no_match AND {machine_hit}) AS hit
    FROM card_printing_tag AS t WHERE t.card_id = c.id AND t.source = :machine) AS mv ON TRUE
LEFT JOIN review_claim AS rc ON rc.card_id = c.id AND rc.expires_at > now()
"""
AWAITING = (
    "c.printing_status = 'unresolved' AND c.missing_since IS NULL AND (m.marker_id IS NOT NULL OR mv.votes > 0) "
    "AND NOT w.needs_c AND NOT w.needs_d"
)
_OWED = "EXISTS (SELECT 1 FROM card_work AS cw WHERE cw.card_id = c.id AND cw.stage = '{stage}')"
"""The card is owed that stage (the work queue, kept by triggers from the one work rule)."""
_FOR_REVIEWER = " AND NOT w.voted_by_reviewer AND c.id <> ALL(CAST(:exclude AS bigint[]))"


@lru_cache(maxsize=1)
def _sql() -> tuple[str, str, dict[str, Any]]:
    """The entry SELECT and the awaiting condition for the registry's hit rule, and the bind values they share."""
    hit, params = machine_hit_sql(CALCULATORS)
    parts = {"needs_c": _OWED.format(stage="C"), "needs_d": _OWED.format(stage="D"), "machine_hit": hit}
    params = {**params, "slow_path": SLOW_PATH_ID, "to_review": TO_REVIEW,
              "machine": MACHINE_SOURCE, "reviewer": None, "exclude": "{}"}
    return _ENTRY.format(**parts), AWAITING, params


def _query(where: str, tail: str = "") -> tuple[TextClause, dict[str, Any]]:
    entry, _, params = _sql()
    return text(f"{entry} WHERE {where} {tail}"), dict(params)


@dataclass(frozen=True)
class QueueEntry:
    """One card awaiting a person, as the queue and the grid list it."""

    card_id: int
    identifier: str
    name: str
    routed: bool
    version: str
    claimed_by: str | None
    voted_by_reviewer: bool
    ineligible: str | None = None
    """Why no machine may vote on the card, when its routing names a reason."""


def _entry(row: Any) -> QueueEntry:
    return QueueEntry(row.card_id, row.identifier, row.name, row.routed, row.version, row.claimed_by,
                      row.voted_by_reviewer, (row.marker_detail or {}).get("ineligible"))


def awaiting_condition() -> str:
    """The SQL condition (card `c`, joined as in the entry query) under which a card awaits a person."""
    return _sql()[1]


def queue_entries(
    conn: Connection,
    *,
    reviewer: str | None = None,
    unvoted_only: bool = False,
    exclude: Sequence[int] = (),
    unclaimed_by_others: bool = False,
    card_ids: Sequence[int] | None = None,
    limit: int = 50,
    offset: int = 0,
) -> list[QueueEntry]:
    """Cards awaiting a person, oldest card first, each marked whether `reviewer` voted on it. `unvoted_only`
    keeps the cards `reviewer` has not voted on and has not skipped (`exclude`); `unclaimed_by_others` leaves out
    cards another reviewer has open; `card_ids` narrows the list.

    Unresolved cards are walked in id order, a chunk at a time, until enough entries are found: the planner
    cannot know how many cards pass the per-card tests, and without the walk it judges every unresolved card
    before it sorts, where the next card usually sits among the first few."""
    where = awaiting_condition() + " AND c.id = ANY(CAST(:chunk AS bigint[]))"
    if unvoted_only:
        where += _FOR_REVIEWER
    if unclaimed_by_others:
        where += " AND (rc.reviewer IS NULL OR rc.reviewer = :reviewer)"
    query, params = _query(where, "ORDER BY c.id")
    params.update(reviewer=reviewer, exclude=int_array(exclude))
    wanted, found = max(0, limit) + max(0, offset), []
    chunks = [sorted(set(card_ids))] if card_ids is not None else _unresolved_chunks(conn)
    for chunk in chunks:
        if len(found) >= wanted or not chunk:
            break
        found += [_entry(row) for row in conn.execute(query, {**params, "chunk": int_array(chunk)})]
    return found[max(0, offset):wanted]


_UNRESOLVED = text(
    "SELECT id FROM card WHERE id > :after AND printing_status = 'unresolved' AND missing_since IS NULL "
    "ORDER BY id LIMIT :size"
)


def _unresolved_chunks(conn: Connection, first: int = 64, largest: int = 4096) -> Iterator[list[int]]:
    """Ids of unresolved, present cards in id order, in chunks that double in size."""
    after, size = 0, first
    while True:
        chunk = list(conn.execute(_UNRESOLVED, {"after": after, "size": size}).scalars())
        if not chunk:
            return
        yield chunk
        after, size = chunk[-1], min(largest, size * 2)


_COUNTS = """
SELECT count(*) AS awaiting, count(*) FILTER (WHERE routed) AS routed,
       count(*) FILTER (WHERE NOT voted_by_reviewer) AS for_reviewer,
       count(*) FILTER (WHERE NOT voted_by_reviewer AND claimed_by <> :reviewer) AS open_by_others
FROM ({entry} WHERE {awaiting}) AS q
"""


@dataclass(frozen=True)
class QueueCounts:
    """How many cards await a person, how many of those the slow path routed, how many `reviewer` has not voted on,
    and how many of those another reviewer has open right now."""

    awaiting: int
    routed: int
    for_reviewer: int
    open_by_others: int = 0


def queue_counts(conn: Connection, reviewer: str | None = None) -> QueueCounts:
    entry, awaiting, params = _sql()
    row = conn.execute(text(_COUNTS.format(entry=entry, awaiting=awaiting)), {**params, "reviewer": reviewer}).one()
    return QueueCounts(int(row.awaiting), int(row.routed), int(row.for_reviewer), int(row.open_by_others))


def review_summary(conn: Connection, card_ids: Sequence[int], sample: int = 5
                   ) -> tuple[QueueCounts, list[QueueEntry]]:
    """The queue's counts and up to `sample` cards awaiting a person, from `card_ids` first, else the oldest."""
    counts = queue_counts(conn)
    entries = queue_entries(conn, card_ids=list(card_ids), limit=sample) if card_ids else []
    if not entries:
        entries = queue_entries(conn, limit=sample)
    return counts, entries


_SOURCE = text("SELECT s.key FROM source AS s JOIN card AS c ON c.source_id = s.id WHERE c.id = :card_id")
_STAGE_C_SKIP = text(
    "SELECT skip_reason FROM card_scan_log WHERE card_id = :card_id AND anonymous_id = :stage_c "
    "AND evidence_key = :sha ORDER BY id DESC LIMIT 1"
)
_SETS = text("SELECT code, name, released_at, symbol_phash FROM expansion WHERE code = ANY(CAST(:codes AS text[]))")
_LABELS = text("SELECT id, set_code, collector_number FROM printing WHERE id = ANY(CAST(:ids AS bigint[]))")
_EVIDENCE_SHOWN = ("collector_raw", "collector_number", "set_code_raw", "set_code", "copyright_year", "legal_raw",
                   "border_color", "bleed_class", "truncated", "symbol_phash", "proxy_marker")


def _queue_state(row: Any) -> str:
    if row.printing_status != "unresolved":
        return row.printing_status
    if row.missing:
        return "missing"
    if row.pending or not row.seen:
        return "pending"
    return "awaiting"


def _calculator_label(voter: str) -> str:
    for calc in CALCULATORS:
        if calc.id == voter:
            return calc.label
    return voter.removeprefix(MACHINE_PREFIX)


def load_card_view(conn: Connection, card_id: int, policy: str = "funnel") -> CardView | None:
    """Everything the page shows for `card_id`, or None for an unknown card."""
    query, params = _query("c.id = :card_id")
    row = conn.execute(query, {**params, "card_id": card_id}).one_or_none()
    if row is None:
        return None
    evidence = load_current_evidence(conn, [card_id]).get(card_id)
    shown = {name: getattr(evidence, name) for name in _EVIDENCE_SHOWN} if evidence is not None else None
    skip = None if evidence is not None else conn.execute(
        _STAGE_C_SKIP, {"card_id": card_id, "stage_c": STAGE_C_ID, "sha": row.content_sha256}).scalar()
    votes = card_votes(conn, [card_id]).get(card_id, [])
    confidences = _machine_confidences(conn, card_id)
    picks = [MachinePick(v.anonymous_id, _calculator_label(v.anonymous_id), v.printing_id,
                         confidences.get((v.anonymous_id, v.printing_id)))
             for v in votes if not v.is_human]
    picks.sort(key=lambda p: -(p.confidence or 0.0))
    humans = sorted((HumanVote(v.anonymous_id, v.source, v.printing_id) for v in votes if v.is_human),
                    key=lambda v: v.voter)
    printings = load_candidates(conn, [row.name_normalised]).get(row.name_normalised, [])
    sets = {r.code: r for r in conn.execute(_SETS, {"codes": text_array(sorted({p.set_code for p in printings}))})}
    scan_symbol = evidence.symbol_phash if evidence is not None else None
    candidates = [
        Candidate(p.id, p.scryfall_id, p.set_code, p.collector_number,
                  sets[p.set_code].name if p.set_code in sets else None,
                  (sets[p.set_code].released_at if p.set_code in sets else None) or p.released_at,
                  p.set_code in sets and sets[p.set_code].symbol_phash is not None,
                  symbol_distance(scan_symbol, sets[p.set_code].symbol_phash if p.set_code in sets else None))
        for p in printings
    ]
    ordered = order_candidates(candidates, picks, read_set_code=evidence.set_code if evidence else None,
                               hint=row.expansion_hint)
    mentioned = {p.printing_id for p in picks} | {v.printing_id for v in humans} | {row.resolved_printing_id}
    outside = sorted(pid for pid in mentioned - {c.printing_id for c in ordered} if pid is not None)
    extra = labels_of(conn, outside)
    detail = row.marker_detail or {}
    return CardView(
        card_id=row.card_id, identifier=row.identifier, name=row.name, expansion_hint=row.expansion_hint,
        source_key=conn.execute(_SOURCE, {"card_id": card_id}).scalar_one(), printing_status=row.printing_status,
        resolved_printing_id=row.resolved_printing_id, queue_state=_queue_state(row), version=row.version,
        routed=bool(row.routed), evidence=shown, stage_c_skip=skip, why=list(detail.get("why") or []),
        ineligible=detail.get("ineligible"), kind=detail.get("kind") or "card",
        calculator_detail={calc.label: detail[calc.label.replace("-", "_")] for calc in CALCULATORS
                           if calc.label.replace("-", "_") in detail},
        machine_picks=picks, human_votes=humans, candidates=ordered,
        consensus_reason=resolve(votes, policy).reason, printing_labels=printing_labels(ordered, extra),
        copies=max(1, len(copies_of(conn, card_id))),
    )


_CONFIDENCES = text(
    "SELECT anonymous_id, printing_id, confidence FROM card_printing_tag WHERE card_id = :card_id AND source = :src"
)


def _machine_confidences(conn: Connection, card_id: int) -> dict[tuple[str, int | None], float | None]:
    rows = conn.execute(_CONFIDENCES, {"card_id": card_id, "src": MACHINE_SOURCE})
    return {(r.anonymous_id, r.printing_id): r.confidence for r in rows}


def labels_of(conn: Connection, printing_ids: Sequence[int]) -> dict[int, str]:
    """`SET #number` of each printing id."""
    rows = conn.execute(_LABELS, {"ids": int_array(sorted(set(printing_ids)))}) if printing_ids else []
    return {r.id: f"{r.set_code.upper()} #{r.collector_number}" for r in rows}


class StaleEntry(VoteError):
    """The card left the queue, or changed, since the reviewer opened it."""


class NotACandidate(VoteError):
    """The printing voted for is not a printing of the card's name."""


_MY_VOTES = text(
    "SELECT printing_id, is_no_match, source FROM card_printing_tag WHERE card_id = :card_id AND anonymous_id = :who"
)
_STATE_WORDS = {"resolved": "it is resolved", "no_match": "it was judged no match",
                "missing": "its file is missing from its source",
                "pending": "Stage C or D is still working on its current image"}


def page_vote_check(card_id: int, reviewer: str, version: str, source: str, policy: str = "funnel") -> VoteCheck:
    """The review page's precondition on a vote (run by `cast_human_vote` under the card's lock).

    Repeating the reviewer's stored vote always passes (a double submit changes nothing). Otherwise the card must
    still await a person at the `version` the reviewer saw, and a printing must be one of its candidates.
    """

    def check(conn: Connection, printing_id: int | None) -> None:
        mine = {(r.printing_id, r.is_no_match, r.source)
                for r in conn.execute(_MY_VOTES, {"card_id": card_id, "who": reviewer})}
        if mine == {(printing_id, printing_id is None, source)}:
            return
        view = load_card_view(conn, card_id, policy)
        if view is None:
            raise VoteError(f"no card has id {card_id}")
        if not view.awaiting:
            raise StaleEntry(f"card {card_id} no longer awaits review: {_STATE_WORDS[view.queue_state]}. "
                             "Your vote was not recorded.")
        if view.version != version:
            raise StaleEntry(f"card {card_id} changed since you opened it (new image, evidence or machine votes). "
                             "Your vote was not recorded; look at it again.")
        if printing_id is not None and view.candidate(printing_id) is None:
            raise NotACandidate(f"that printing is not among the candidates for {view.name!r} (card {card_id}). "
                                "Nothing was recorded.")

    return check


_SOURCE_FILE = text(
    "SELECT s.id AS source_id, s.kind, s.location, s.endpoint, s.region, s.credentials, s.allow_private, "
    "c.identifier, c.remote_url, c.remote_token, c.content_sha256, c.content_verified "
    "FROM card AS c JOIN source AS s ON s.id = c.source_id WHERE c.id = :card_id"
)


@dataclass(frozen=True)
class ScanPlace:
    """Where a card's scan is: a file under its source directory (`location`, `identifier`), or (`remote_token`
    set) an object of a remote source, with what fetching it needs and the hash its bytes must have."""

    location: str
    identifier: str
    kind: str = "directory"
    source_id: int = 0
    remote_url: str | None = None
    remote_token: str | None = None
    content_sha256: str | None = None
    content_verified: bool = True
    endpoint: str | None = None
    region: str | None = None
    credentials: str | None = None
    allow_private: bool = False

    @property
    def remote(self) -> bool:
        return self.remote_token is not None

    @property
    def ref(self) -> str:
        """The object to fetch: a manifest entry's URL, or the S3 key (the identifier)."""
        return self.remote_url if self.kind == "http" and self.remote_url else self.identifier


def scan_location(conn: Connection, card_id: int) -> ScanPlace | None:
    """Where a card's scan is, or None for an unknown card."""
    row = conn.execute(_SOURCE_FILE, {"card_id": card_id}).one_or_none()
    return ScanPlace(**row._mapping) if row else None


_CORNERS = text(
    "SELECT e.card_corners FROM image_evidence AS e JOIN card AS c ON c.id = e.card_id "
    "AND e.content_sha256 = c.content_sha256 WHERE c.id = :card_id AND e.card_corners IS NOT NULL "
    "ORDER BY e.updated_at DESC LIMIT 1"
)


def card_corners(conn: Connection, card_id: int) -> list[float] | None:
    """Where Stage C found the card in its current bytes (8 normalised numbers), or None when it stored none."""
    found = conn.execute(_CORNERS, {"card_id": card_id}).scalar()
    return list(found) if found is not None else None
