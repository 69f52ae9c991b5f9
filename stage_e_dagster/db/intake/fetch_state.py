"""What a fetch leaves in the database: the card's verified bytes, a named fetch skip, a broken attempt, a deferral,
and the health of the host that answered (when it last answered; the 403s in a row since, which judge a lockout).

Each card write is guarded by the change token the fetch was for: a sync that saw a new version meanwhile wins,
and the old version's outcome is dropped. A final fetch skip sets `card.fetch_failed` (the work rule then owes the
card nothing) and is logged once in Stage C's skip log under the key `fetch:<fetch key>`, which never matches a
content hash, so it is never carried to a copy and never counted as an image-load failure.

A lockout is judged per host (`fetch_host`, keyed by the origin of the URL that answered, or by bucket and endpoint
for S3): the 403s in a row (`forbidden_streak`, and the cards that got them) count across every process and every
source; any answer from the host resets them. So 403s scattered over a manifest's hosts never add up to a lockout,
and a host that never answered (one that refuses hot-linking) gets named skips, never a lockout. When the streak
reaches the limit and the host answered before, the lockout trip is recorded naming the source and the host, the
streak's cards are given back (their 403s were the lockout's, not theirs) and the streak starts again; all in one
transaction. Every function runs in the caller's transaction.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, text

from stage_e_dagster.db.arrays import int_array
from stage_e_dagster.db.runs import trips
from stage_e_dagster.domain.work import STAGE_C_ID

LOCKOUT_BAR = "fetch_lockout"
ANSWER_WRITE_SECONDS = 5
"""A source's or host's `fetch_ok_at` is rewritten at most this often (not once per fetch) while nothing else
changes."""


def skip_key(fetch_key: str) -> str:
    """Stage C's skip-log key of a fetch skip: never a content hash."""
    return f"fetch:{fetch_key}"


def record_fetched(conn: Connection, card_id: int, token: str, sha256: str, size: int, phash: int | None) -> bool:
    """The card's bytes as fetched: its content hash is now verified (a new hash resets its work, by trigger).
    False when the card moved to another version meanwhile."""
    return conn.execute(text(
        "UPDATE card SET content_sha256 = :sha, size_bytes = :size, content_phash = :phash, content_verified = true, "
        "fetch_attempts = 0, updated_at = now() WHERE id = :id AND remote_token = :token"),
        {"sha": sha256, "size": size, "phash": phash, "id": card_id, "token": token}).rowcount == 1


def source_answered(conn: Connection, source_id: int, host: str | None = None) -> None:
    """The source answered a fetch, from `host`: the host counts as one that answered before, and its 403 streak
    ends."""
    conn.execute(text(
        "UPDATE source SET fetch_ok_at = now() WHERE id = :s AND "
        "(fetch_ok_at IS NULL OR fetch_ok_at < now() - make_interval(secs => :every))"),
        {"s": source_id, "every": ANSWER_WRITE_SECONDS})
    if host is not None:
        conn.execute(text(
            "INSERT INTO fetch_host AS h (host, fetch_ok_at) VALUES (:h, now()) ON CONFLICT (host) DO UPDATE SET "
            "fetch_ok_at = now(), forbidden_streak = 0, forbidden_cards = '{}' WHERE h.forbidden_streak > 0 OR "
            "h.fetch_ok_at IS NULL OR h.fetch_ok_at < now() - make_interval(secs => :every)"),
            {"h": host, "every": ANSWER_WRITE_SECONDS})


def record_skip(conn: Connection, card_id: int, token: str, key: str, reason: str, detail: dict[str, Any],
                run_id: str | None) -> bool:
    """End this version's fetching with the named skip `reason`; False when the card moved to another version."""
    updated = conn.execute(text("UPDATE card SET fetch_failed = :reason WHERE id = :id AND remote_token = :token"),
                           {"reason": reason, "id": card_id, "token": token}).rowcount == 1
    if updated:
        conn.execute(text(
            "INSERT INTO card_scan_log (card_id, anonymous_id, skip_reason, evidence_key, run_id, detail) "
            "SELECT :id, :stage_c, :reason, :key, :run_id, CAST(:detail AS jsonb) WHERE NOT EXISTS "
            "(SELECT 1 FROM card_scan_log WHERE card_id = :id AND anonymous_id = :stage_c AND skip_reason = :reason "
            "AND evidence_key = :key)"),
            {"id": card_id, "stage_c": STAGE_C_ID, "reason": reason, "key": skip_key(key), "run_id": run_id,
             "detail": _json(detail)})
    return updated


def record_broken(conn: Connection, card_id: int, token: str, key: str, reason: str, detail: dict[str, Any],
                  retries: int, run_id: str | None) -> tuple[int, bool]:
    """Count a broken fetch; at `retries` of them the skip is final. (broken fetches so far, whether final)."""
    attempts = conn.execute(text("UPDATE card SET fetch_attempts = fetch_attempts + 1 WHERE id = :id "
                                 "AND remote_token = :token RETURNING fetch_attempts"),
                            {"id": card_id, "token": token}).scalar()
    if attempts is None or attempts < retries:
        return int(attempts or 0), False
    return attempts, record_skip(conn, card_id, token, key, reason, {**detail, "attempts": attempts}, run_id)


def defer(conn: Connection, card_ids: Iterable[int], seconds: float) -> int:
    """Offer the cards again no sooner than `seconds` from now (the batch's close keeps the later wait)."""
    ids = sorted(set(card_ids))
    if not ids:
        return 0
    return conn.execute(text("UPDATE card_work SET retry_at = GREATEST(retry_at, now() + make_interval(secs => :s)) "
                             "WHERE card_id = ANY(CAST(:ids AS bigint[]))"),
                        {"s": seconds, "ids": int_array(ids)}).rowcount


@dataclass(frozen=True)
class Lockout:
    """A host that locked us out: the source whose fetch completed the streak, the host, the 403s in a row, the
    limit, the trip recorded, the cards given back."""

    source_id: int
    source_key: str
    streak: int
    limit: int
    trip_id: str | None
    cards: list[int] = field(default_factory=list)
    host: str = ""

    def describe(self) -> str:
        return (f"host {self.host} of source {self.source_key} locked us out: {self.streak} 403s in a row from a "
                f"host that answered before (limit {self.limit})")


def host_locked(conn: Connection, host: str) -> bool:
    """Whether a lockout trip naming `host` is open."""
    return bool(conn.execute(text("SELECT EXISTS (SELECT 1 FROM envelope_trip WHERE acknowledged_at IS NULL AND "
                                  "bar = :bar AND detail ->> 'host' = :h)"), {"bar": LOCKOUT_BAR, "h": host}).scalar())


LOCKED = "locked"
"""`record_forbidden`'s answer for a 403 from a host whose lockout trip is open: the card is deferred, not judged."""


def record_forbidden(conn: Connection, source_id: int, card_id: int | None, token: str, key: str, limit: int,
                     run_id: str, detail: dict[str, Any], host: str) -> Lockout | str | None:
    """A 403 (or 401) from `host`: a named skip for the card (None), or, when it makes the host's streak a lockout
    (see the module docstring), the lockout recorded; `LOCKED` while the host's lockout trip is open (a response to
    a request that was in flight when it tripped, here or in another process: deferred with the rest). With no card
    (a fetch for the review page) the 403 counts toward the streak and nothing is skipped.

    The host's row is locked before the open trip is looked for: a 403 judged while another thread or process
    records the lockout waits for it, then sees its trip (a check before the wait would miss it and skip the card for
    good)."""
    locked = text("SELECT host FROM fetch_host WHERE host = :h FOR UPDATE")
    if conn.execute(locked, {"h": host}).first() is None:  # the host's first 403: its row, then the lock
        conn.execute(text("INSERT INTO fetch_host (host) VALUES (:h) ON CONFLICT DO NOTHING"), {"h": host})
        conn.execute(locked, {"h": host})
    if host_locked(conn, host):
        return LOCKED
    row = conn.execute(text(
        "UPDATE fetch_host SET forbidden_streak = forbidden_streak + 1, forbidden_cards = CASE WHEN "
        "CAST(:card AS bigint) IS NULL THEN forbidden_cards ELSE array_append(forbidden_cards, CAST(:card AS bigint)) "
        "END WHERE host = :h RETURNING forbidden_streak, forbidden_cards, fetch_ok_at"),
        {"h": host, "card": card_id}).one()
    if row.fetch_ok_at is None or row.forbidden_streak < limit:
        if card_id is not None:
            record_skip(conn, card_id, token, key, "fetch-forbidden", detail, run_id)
        return None
    source_key = conn.execute(text("SELECT key FROM source WHERE id = :s"), {"s": source_id}).scalar()
    cards = sorted(set(row.forbidden_cards))
    conn.execute(text("UPDATE card SET fetch_failed = NULL WHERE id = ANY(CAST(:ids AS bigint[])) "
                      "AND fetch_failed = 'fetch-forbidden'"), {"ids": int_array(cards)})
    conn.execute(text("UPDATE fetch_host SET forbidden_streak = 0, forbidden_cards = '{}' WHERE host = :h"),
                 {"h": host})
    trip_id = trips.record_trip(conn, run_id, LOCKOUT_BAR, float(row.forbidden_streak), float(limit - 1), {
        "source": source_key, "source_id": source_id, "host": host, "cards": cards[:50], "recorded_by": "run",
        "what": f"{row.forbidden_streak} consecutive 403s from host {host} (source {source_key}), which answered "
                "before",
    })
    return Lockout(source_id, str(source_key), int(row.forbidden_streak), limit, trip_id, cards, host)


def _json(detail: dict[str, Any]) -> str:
    import json

    return json.dumps({k: v if isinstance(v, int | float | str | bool) or v is None else str(v)
                       for k, v in detail.items()})
