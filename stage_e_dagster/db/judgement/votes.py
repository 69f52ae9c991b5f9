"""Writing votes (`card_printing_tag`) and abstentions (`card_scan_log`), set-based and race-proof.

Votes go through a value-aware split per (card, voter) group: the stored set of (printing, no-match, source)
equal to the proposed one -> nothing is written and the group counts `already_voted`; different -> the voter's
rows for the card move to the archive and the new ones are inserted, in the caller's one transaction; nothing
stored -> insert. An empty proposed group withdraws the voter's stored votes. A machine group also retires, on
its card, the stored votes of every older version of its calculator family (`domain/voters.py`), archived as
`family-bump`. Every vote that leaves is archived (`db/judgement/vote_archive.py`) with its reason and the writing run.
Inserts use `ON CONFLICT DO NOTHING` (no target, so both partial unique indexes are covered): a writer that lost a
race is absorbed, never raised, and its group counts `already_voted` (and `race_absorbed`). Cards are locked first
(`db.core.transactions.lock_cards`), which makes the split exact under concurrent overlapping batches.

Scan log rules: a `to-review` marker is inserted with `ON CONFLICT DO NOTHING` on `uq_scan_log_review_once`, so it
is recorded once per (card, evidence version). Any other abstention is appended unless the latest log row of
that (card, voter) already has the same skip reason and evidence key, so identical re-runs append nothing.

The writers run in the caller's transaction. `cast_human_vote` takes an engine: it is one transaction that it retries
from the start after a deadlock (`db.core.transactions.in_transaction`), which only the transaction's owner can do.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, fields

from sqlalchemy import Connection, Engine, text

from stage_e_dagster.db.arrays import bool_array, float_array, int_array, text_array
from stage_e_dagster.db.core.transactions import in_transaction, lock_cards
from stage_e_dagster.db.judgement.consensus_store import check_policy, recompute_consensus
from stage_e_dagster.db.judgement.identity_groups import copies_of
from stage_e_dagster.db.judgement.vote_archive import Removal, archive_votes
from stage_e_dagster.domain.calculators import MACHINE_PREFIX
from stage_e_dagster.domain.consensus import MACHINE_SOURCE
from stage_e_dagster.domain.stage_d import LogEntry, OutcomeKey, ProposedVote, VoteGroup
from stage_e_dagster.domain.voters import FAMILY_BUMP, archive_reason, superseded

_STORED = text(
    "SELECT card_id, anonymous_id, printing_id, is_no_match, source FROM card_printing_tag "
    "WHERE card_id = ANY(CAST(:cards AS bigint[])) AND anonymous_id = ANY(CAST(:voters AS text[]))"
)
_STORED_MACHINE_VOTERS = text(
    "SELECT DISTINCT card_id, anonymous_id FROM card_printing_tag "
    "WHERE card_id = ANY(CAST(:cards AS bigint[])) AND source = 'ocr'"
)
_INSERT = text(
    "INSERT INTO card_printing_tag (card_id, printing_id, is_no_match, anonymous_id, source, confidence, run_id, "
    "applied_from_card_id) "
    "SELECT v.card_id, v.printing_id, v.is_no_match, v.anonymous_id, v.source, v.confidence, :run_id, v.applied_from "
    "FROM unnest(CAST(:cards AS bigint[]), CAST(:printings AS bigint[]), CAST(:no_match AS boolean[]), "
    "CAST(:voters AS text[]), CAST(:sources AS text[]), CAST(:confidences AS double precision[]), "
    "CAST(:applied_from AS bigint[])) "
    "AS v(card_id, printing_id, is_no_match, anonymous_id, source, confidence, applied_from) "
    "ORDER BY v.card_id, v.anonymous_id, v.is_no_match, v.printing_id "
    "ON CONFLICT DO NOTHING RETURNING card_id, anonymous_id"
)
_LATEST_LOG = text(
    "SELECT DISTINCT ON (card_id, anonymous_id) card_id, anonymous_id, skip_reason, evidence_key "
    "FROM card_scan_log WHERE card_id = ANY(CAST(:cards AS bigint[])) "
    "AND anonymous_id = ANY(CAST(:voters AS text[])) ORDER BY card_id, anonymous_id, id DESC"
)
_APPEND_LOG = text(
    "INSERT INTO card_scan_log (card_id, anonymous_id, skip_reason, evidence_key, run_id, detail) "
    "SELECT v.card_id, v.anonymous_id, v.skip_reason, v.evidence_key, :run_id, CAST(v.detail AS jsonb) "
    "FROM unnest(CAST(:cards AS bigint[]), CAST(:voters AS text[]), CAST(:reasons AS text[]), "
    "CAST(:keys AS text[]), CAST(:details AS text[])) AS v(card_id, anonymous_id, skip_reason, evidence_key, detail) "
    "ORDER BY v.card_id, v.anonymous_id ON CONFLICT DO NOTHING RETURNING skip_reason"
)


@dataclass
class VoteWriteResult:
    """What a vote write did, per (card, voter) group and per row.

    `inserted + replaced + already_voted` equals the number of non-empty proposed groups; `withdrawn` counts
    empty groups that removed stored votes; `race_absorbed` (part of `already_voted`) counts new groups whose
    rows another writer had just inserted; `retired` counts (card, older family version) groups a newer version
    retired. `votes_removed` counts every vote row that left (each one archived).
    """

    inserted: int = 0
    replaced: int = 0
    already_voted: int = 0
    withdrawn: int = 0
    race_absorbed: int = 0
    retired: int = 0
    votes_cast: int = 0
    votes_removed: int = 0
    missing_cards: int = 0

    def merge(self, other: VoteWriteResult) -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))


@dataclass
class LogWriteResult:
    """What a scan-log write did: abstentions appended or already latest, review markers new or already there."""

    appended: int = 0
    unchanged: int = 0
    review_marked: int = 0
    review_already: int = 0

    def merge(self, other: LogWriteResult) -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))


def _dedupe_groups(groups: Iterable[VoteGroup]) -> list[VoteGroup]:
    """One group per (card, voter) (the last wins), each with one vote per outcome, in a stable order."""
    latest: dict[tuple[int, str], VoteGroup] = {}
    for group in groups:
        unique = {vote.key: vote for vote in group.votes}
        latest[(group.card_id, group.anonymous_id)] = VoteGroup(group.card_id, group.anonymous_id,
                                                                tuple(unique.values()))
    return [latest[key] for key in sorted(latest)]


def stored_outcomes(conn: Connection, card_ids: Sequence[int], voters: Sequence[str]
                    ) -> dict[tuple[int, str], set[OutcomeKey]]:
    """The stored value of every (card, voter) group among `card_ids` x `voters` that has votes."""
    stored: dict[tuple[int, str], set[OutcomeKey]] = defaultdict(set)
    if card_ids and voters:
        rows = conn.execute(_STORED, {"cards": int_array(card_ids), "voters": text_array(voters)})
        for row in rows:
            stored[(row.card_id, row.anonymous_id)].add((row.printing_id, row.is_no_match, row.source))
    return stored


def family_retirements(conn: Connection, groups: Sequence[VoteGroup]) -> list[Removal]:
    """The stored machine votes that the groups' newer calculator versions retire, card by card."""
    deciding: dict[int, list[str]] = defaultdict(list)
    for group in groups:
        if group.anonymous_id.startswith(MACHINE_PREFIX):
            deciding[group.card_id].append(group.anonymous_id)
    stored: dict[int, list[str]] = defaultdict(list)
    if deciding:
        for row in conn.execute(_STORED_MACHINE_VOTERS, {"cards": int_array(sorted(deciding))}):
            stored[row.card_id].append(row.anonymous_id)
    return [
        Removal(card_id, old, FAMILY_BUMP, {"superseded_by": new})
        for card_id, voters in sorted(deciding.items())
        for old, new in sorted(superseded(stored[card_id], voters).items())
    ]


def write_vote_groups(conn: Connection, groups: Iterable[VoteGroup], run_id: str | None) -> VoteWriteResult:
    """Store each group by the value-aware split, in the caller's transaction (see the module docstring)."""
    result = VoteWriteResult()
    wanted = _dedupe_groups(groups)
    if not wanted:
        return result
    existing = lock_cards(conn, (g.card_id for g in wanted))
    result.missing_cards = len({g.card_id for g in wanted} - existing)
    wanted = [g for g in wanted if g.card_id in existing]
    # A group of an older version than another group for the same card is dropped: the newer version decides.
    by_card: dict[int, list[str]] = defaultdict(list)
    for group in wanted:
        by_card[group.card_id].append(group.anonymous_id)
    older = {(card, old) for card, voters in by_card.items() for old in superseded(voters, voters)}
    wanted = [g for g in wanted if (g.card_id, g.anonymous_id) not in older]
    removals = family_retirements(conn, wanted)
    stored = stored_outcomes(conn, sorted({g.card_id for g in wanted}), sorted({g.anonymous_id for g in wanted}))
    write: list[VoteGroup] = []
    fresh: set[tuple[int, str]] = set()
    for group in wanted:
        key = (group.card_id, group.anonymous_id)
        have = stored.get(key, set())
        if have == set(group.outcome_set()):
            result.already_voted += 1 if group.votes else 0
            continue
        if have:
            human = any(vote.source != MACHINE_SOURCE for vote in group.votes)
            removals.append(Removal(group.card_id, group.anonymous_id, archive_reason(not group.votes, human)))
            if group.votes:
                result.replaced += 1
            else:
                result.withdrawn += 1
        elif group.votes:
            fresh.add(key)
        if group.votes:
            write.append(group)
    result.retired = sum(1 for r in removals if r.reason == FAMILY_BUMP)
    result.votes_removed = archive_votes(conn, removals, run_id)
    landed = _insert(conn, write, run_id)
    result.votes_cast = sum(landed.values())
    absorbed = len(fresh - set(landed))
    result.race_absorbed = absorbed
    result.inserted = len(fresh) - absorbed
    result.already_voted += absorbed
    return result


def _insert(conn: Connection, groups: Sequence[VoteGroup], run_id: str | None) -> dict[tuple[int, str], int]:
    """Insert the groups' rows (conflicts ignored); returns rows that landed per (card, voter)."""
    rows = [(g.card_id, g.anonymous_id, v) for g in groups for v in g.votes]
    landed: dict[tuple[int, str], int] = defaultdict(int)
    if not rows:
        return landed
    params = {
        "cards": int_array(r[0] for r in rows),
        "voters": text_array(r[1] for r in rows),
        "printings": int_array(r[2].printing_id for r in rows),
        "no_match": bool_array(r[2].is_no_match for r in rows),
        "sources": text_array(r[2].source for r in rows),
        "confidences": float_array(r[2].confidence for r in rows),
        "applied_from": int_array(r[2].applied_from_card_id for r in rows),
        "run_id": run_id,
    }
    for row in conn.execute(_INSERT, params):
        landed[(row.card_id, row.anonymous_id)] += 1
    return landed


def write_log_entries(conn: Connection, entries: Iterable[LogEntry], run_id: str | None) -> LogWriteResult:
    """Append abstentions and review markers by the scan-log rules; cards must be locked by the caller."""
    result = LogWriteResult()
    entries = list(entries)
    markers = [e for e in entries if e.is_review_marker]
    skips = [e for e in entries if not e.is_review_marker]
    latest: dict[tuple[int, str], tuple[str, str | None]] = {}
    if skips:
        params = {"cards": int_array(sorted({e.card_id for e in skips})),
                  "voters": text_array(sorted({e.anonymous_id for e in skips}))}
        for row in conn.execute(_LATEST_LOG, params):
            latest[(row.card_id, row.anonymous_id)] = (row.skip_reason, row.evidence_key)
    append = []
    for entry in skips:
        if latest.get((entry.card_id, entry.anonymous_id)) == (entry.skip_reason, entry.evidence_key):
            result.unchanged += 1
        else:
            append.append(entry)
            latest[(entry.card_id, entry.anonymous_id)] = (entry.skip_reason, entry.evidence_key)
    landed = _append(conn, append + markers, run_id)
    result.appended = len(landed) - landed.count("to-review")
    result.review_marked = landed.count("to-review")
    result.review_already = len(markers) - result.review_marked
    return result


def _append(conn: Connection, entries: Sequence[LogEntry], run_id: str | None) -> list[str]:
    if not entries:
        return []
    params = {
        "cards": int_array(e.card_id for e in entries),
        "voters": text_array(e.anonymous_id for e in entries),
        "reasons": text_array(e.skip_reason for e in entries),
        "keys": text_array(e.evidence_key for e in entries),
        "details": text_array(json.dumps(e.detail, default=str, sort_keys=True) for e in entries),
        "run_id": run_id,
    }
    return list(conn.execute(_APPEND_LOG, params).scalars())


class VoteError(ValueError):
    """A human vote that cannot be cast; the message says why."""


@dataclass(frozen=True)
class HumanVoteResult:
    """A cast human vote: the printing voted for (None for no-match), how the write went over the card and its
    copies, the card's consensus, and the other cards of its identity group the vote was applied to."""

    card_id: int
    printing_id: int | None
    write: VoteWriteResult
    printing_status: str
    resolved_printing_id: int | None
    reason: str
    copies: tuple[int, ...] = ()

    @property
    def recorded(self) -> bool:
        """True when the vote changed what is stored on the card or any copy (False: already voted)."""
        return bool(self.write.inserted or self.write.replaced)


MAX_USER_LENGTH = 100  # card_printing_tag.anonymous_id
_PRINTING_BY_SCRYFALL = text("SELECT id FROM printing WHERE scryfall_id = :scryfall_id")


def check_user_name(user: str) -> str:
    """`user` stripped, if it can name a human voter; `VoteError` saying why not otherwise."""
    user = user.strip()
    if not user:
        raise VoteError("a user name is required")
    if len(user) > MAX_USER_LENGTH:
        raise VoteError(f"a user name has at most {MAX_USER_LENGTH} characters")
    if user.startswith(MACHINE_PREFIX):
        raise VoteError(f"user names starting with {MACHINE_PREFIX!r} are reserved for machine voters")
    return user


VoteCheck = Callable[[Connection, int | None], None]
"""A caller's precondition on a human vote: called with the locked card's transaction and the printing id voted
for (None for no-match); it raises `VoteError` to refuse the vote, and then nothing is written."""


def cast_human_vote(
    engine: Engine,
    card_id: int,
    user: str,
    *,
    scryfall_id: str | None = None,
    no_match: bool = False,
    admin: bool = False,
    policy: str = "funnel",
    check: VoteCheck | None = None,
) -> HumanVoteResult:
    """Store `user`'s vote on a card and on every copy of it (same content hash), replacing their previous vote on
    each, and recompute each card's consensus.

    The voter identity is the user name; the source is `admin` or `user`. On a copy the vote records the card voted
    on (`applied_from_card_id`). Raises `VoteError` for an unknown card or Scryfall id, for both or neither of a
    printing and no-match, for a user name a machine voter uses, and whatever `check` (run under the cards' lock,
    before anything is written) refuses.
    """
    check_policy(policy)
    user = check_user_name(user)
    if (scryfall_id is None) == (not no_match):
        raise VoteError("give exactly one of --printing SCRYFALL_ID and --no-match")

    def work(conn: Connection) -> HumanVoteResult:
        printing_id: int | None = None
        if scryfall_id is not None:
            printing_id = conn.execute(_PRINTING_BY_SCRYFALL, {"scryfall_id": scryfall_id.strip()}).scalar()
            if printing_id is None:
                raise VoteError(f"no printing has Scryfall id {scryfall_id!r}")
        group = sorted(lock_cards(conn, copies_of(conn, card_id)))
        if card_id not in group:
            raise VoteError(f"no card has id {card_id}")
        if check is not None:
            check(conn, printing_id)
        source = "admin" if admin else "user"
        groups = [VoteGroup(copy, user, (ProposedVote(printing_id, printing_id is None, source,
                                                      applied_from_card_id=None if copy == card_id else card_id),))
                  for copy in group]
        written = write_vote_groups(conn, groups, run_id=None)
        _, resolutions = recompute_consensus(conn, group, policy)
        resolution = resolutions[card_id]
        return HumanVoteResult(card_id, printing_id, written, resolution.printing_status,
                               resolution.resolved_printing_id, resolution.reason,
                               tuple(copy for copy in group if copy != card_id))

    return in_transaction(engine, work)
