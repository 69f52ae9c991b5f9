"""Identity groups in the database: cards with the same `content_sha256` are copies of one image.

Stage C extracts one copy and carries the result to the others (`carry_evidence`, `carry_skips`): a carried
`image_evidence` row is the donor row's columns and extractor versions, with `carried_from_card_id` naming the card
whose file was actually read. A carry is one `INSERT ... ON CONFLICT` on (card, bytes): it never overwrites a row
that is already current, so two batches carrying the same copy at once write it once and raise nothing.

`ContentLocks` keeps two batches from extracting the same bytes at once: a batch extracts a content hash only while
it holds that hash's session advisory lock, on a dedicated connection (so a killed batch frees it at once). A batch
that finds the lock taken waits for it and then carries what the holder stored.

The carries and lookups run in the caller's connection (one transaction each). `ContentLocks` opens its dedicated
lock connection from the engine's URL (`db.core.advisory_locks`): a pooled connection must never hold a session lock.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Iterable

from sqlalchemy import Connection, Engine, text

from stage_e_dagster.db.arrays import int_array, text_array
from stage_e_dagster.db.core.advisory_locks import (
    Key,
    lock_connection_params,
    open_lock_connection,
    try_lock,
    try_lock_many,
    unlock,
)
from stage_e_dagster.db.judgement.evidence_store import route_skips_to_review
from stage_e_dagster.db.work.predicates import CURRENT_VERSIONS, WORK_STAGE
from stage_e_dagster.domain.stage_c import EXTRACTOR_FIELDS
from stage_e_dagster.domain.work import FILE_SKIPS, STAGE_C_ID

COPY_NAMESPACE = 0x53454348  # "SECH": stage-e content hash; the `classid` of every content lock
_COLUMNS = ", ".join(name for names in EXTRACTOR_FIELDS.values() for name in names)
_EXCLUDED = ", ".join(f"{name} = EXCLUDED.{name}" for name in _COLUMNS.split(", "))

_COPIES = text(
    "SELECT o.id FROM card AS c JOIN card AS o ON o.content_sha256 = c.content_sha256 WHERE c.id = :id ORDER BY o.id"
)


def copies_of(conn: Connection, card_id: int) -> list[int]:
    """Every card with the same bytes as `card_id` (itself included), by id; empty for an unknown card."""
    return list(conn.execute(_COPIES, {"id": card_id}).scalars())


_UPSERT = (
    f"INSERT INTO image_evidence (card_id, content_sha256, extractor_versions, {_COLUMNS}, run_id, "
    "carried_from_card_id) "
    f"SELECT v.card_id, d.content_sha256, d.extractor_versions, {', '.join('d.' + n for n in _COLUMNS.split(', '))}, "
    "CAST(:run_id AS text), coalesce(d.carried_from_card_id, d.card_id) FROM {source} "
    "ON CONFLICT ON CONSTRAINT uq_image_evidence_card_sha DO UPDATE SET "
    f"{_EXCLUDED}, extractor_versions = image_evidence.extractor_versions || EXCLUDED.extractor_versions, "
    "run_id = EXCLUDED.run_id, carried_from_card_id = EXCLUDED.carried_from_card_id, decided_by = NULL, "
    "updated_at = now() "
    f"WHERE CAST(:overwrite AS boolean) OR NOT image_evidence.extractor_versions @> {CURRENT_VERSIONS} "
    "RETURNING card_id"
)
# Any current row of the same bytes on another card is a donor (an extracted one first); the card must still hold
# those bytes.
_CARRY_ANY = text(_UPSERT.format(source=(
    "unnest(CAST(:cards AS bigint[])) AS v(card_id) JOIN card AS c ON c.id = v.card_id "
    "JOIN LATERAL (SELECT * FROM image_evidence AS e WHERE e.content_sha256 = c.content_sha256 "
    f"AND e.card_id <> c.id AND e.extractor_versions @> {CURRENT_VERSIONS} "
    "ORDER BY e.carried_from_card_id IS NOT NULL, e.id LIMIT 1) AS d ON true ORDER BY v.card_id"
)))
# The donor is one card's row for its bytes (the copy a batch just extracted).
_CARRY_FROM = text(_UPSERT.format(source=(
    "unnest(CAST(:cards AS bigint[])) AS v(card_id) JOIN card AS c ON c.id = v.card_id "
    "JOIN image_evidence AS d ON d.card_id = :donor AND d.content_sha256 = c.content_sha256 "
    "WHERE v.card_id <> :donor ORDER BY v.card_id"
)))
_CARRY_SKIPS = text(
    """
    INSERT INTO card_scan_log (card_id, anonymous_id, skip_reason, evidence_key, run_id, detail)
    SELECT c.id, :stage_c, d.skip_reason, d.evidence_key, :run_id,
           d.detail || jsonb_build_object('carried_from_card_id',
                                          coalesce(CAST(d.detail ->> 'carried_from_card_id' AS bigint), d.card_id))
    FROM unnest(CAST(:cards AS bigint[])) AS v(card_id) JOIN card AS c ON c.id = v.card_id
    JOIN LATERAL (SELECT l.card_id, l.skip_reason, l.evidence_key, l.detail FROM card_scan_log AS l
                  WHERE l.anonymous_id = :stage_c AND l.evidence_key = c.content_sha256 AND l.card_id <> c.id
                    AND l.skip_reason <> ALL(CAST(:file_skips AS text[]))
                  ORDER BY l.id LIMIT 1) AS d ON true
    WHERE NOT EXISTS (SELECT 1 FROM card_scan_log AS s WHERE s.card_id = c.id AND s.anonymous_id = :stage_c
                      AND s.evidence_key = c.content_sha256)
    ORDER BY c.id
    RETURNING card_id
    """
)


def carry_evidence(conn: Connection, card_ids: Collection[int], run_id: str | None, *, donor: int | None = None,
                   overwrite: bool = False) -> set[int]:
    """Give each card without current evidence a carried copy of its bytes' evidence: from `donor`'s row when
    given, else from any current row of the same bytes (current as the `work_rule` row says). `overwrite` also
    replaces current rows (a forced re-extraction). Returns the cards whose row was written."""
    if not card_ids:
        return set()
    params = {"cards": int_array(sorted(card_ids)), "run_id": run_id, "overwrite": overwrite, "donor": donor}
    return set(conn.execute(_CARRY_FROM if donor is not None else _CARRY_ANY, params).scalars())


def carry_skips(conn: Connection, card_ids: Collection[int], run_id: str | None) -> set[int]:
    """Give each card without a Stage C skip for its bytes the skip Stage C logged for a copy's bytes (a file skip
    such as `file-missing` is about one copy's file, so it is never carried). Returns the cards logged."""
    if not card_ids:
        return set()
    params = {"cards": int_array(sorted(card_ids)), "run_id": run_id, "stage_c": STAGE_C_ID,
              "file_skips": text_array(FILE_SKIPS)}
    carried = set(conn.execute(_CARRY_SKIPS, params).scalars())
    route_skips_to_review(conn, sorted(carried), run_id)  # a copy of a routed photo awaits review as it does
    return carried


_SETTLED = text(
    f"SELECT c.id FROM card AS c WHERE c.id = ANY(CAST(:cards AS bigint[])) AND {WORK_STAGE} IS DISTINCT FROM 'C' "
    "ORDER BY c.id"
)


def settled(conn: Connection, card_ids: Collection[int]) -> set[int]:
    """The cards that no longer need Stage C (current evidence or a skip for their bytes, e.g. written meanwhile by
    a concurrent batch)."""
    if not card_ids:
        return set()
    return set(conn.execute(_SETTLED, {"cards": int_array(sorted(card_ids))}).scalars())


def content_key(content_sha256: str) -> Key:
    """The advisory-lock key of a content hash: (`COPY_NAMESPACE`, its first 31 bits)."""
    return COPY_NAMESPACE, int(content_sha256[:8], 16) & 0x7FFF_FFFF


class ContentLocks:
    """Session advisory locks on content hashes, held on one dedicated connection for a batch's life."""

    POLL_SECONDS = 0.1

    def __init__(self, engine: Engine, holder: str, connect_timeout: int = 10) -> None:
        params = lock_connection_params(engine.url, f"stage-e copies {holder}", connect_timeout)
        self._conn = open_lock_connection(params)
        self._held: set[str] = set()

    def try_lock(self, hashes: Iterable[str]) -> set[str]:
        """Take every free lock among `hashes` without waiting; returns the hashes now held."""
        wanted = sorted(set(hashes) - self._held)
        taken = try_lock_many(self._conn, [content_key(sha) for sha in wanted])
        self._held.update(sha for sha, took in zip(wanted, taken, strict=True) if took)
        return set(self._held)

    def release(self, sha: str) -> None:
        if sha in self._held:
            self._held.discard(sha)
            unlock(self._conn, content_key(sha))

    def wait_free(self, hashes: Iterable[str], timeout_seconds: float) -> set[str]:
        """Wait until another session's lock on each hash is released (polling, so this connection never blocks in
        a query); returns the hashes seen free within `timeout_seconds`."""
        waiting = set(hashes) - self._held
        free: set[str] = set()
        deadline = time.monotonic() + timeout_seconds
        while waiting:
            for sha in sorted(waiting):
                if try_lock(self._conn, content_key(sha)):
                    unlock(self._conn, content_key(sha))
                    free.add(sha)
            waiting -= free
            if not waiting or time.monotonic() >= deadline:
                break
            time.sleep(self.POLL_SECONDS)
        return free

    def close(self) -> None:
        """Drop the connection, which releases every lock still held."""
        self._held.clear()
        self._conn.close()

    def __enter__(self) -> ContentLocks:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
