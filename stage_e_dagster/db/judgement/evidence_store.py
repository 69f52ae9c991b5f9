"""Stage C storage: what a batch's cards need, evidence upserts with carry-forward, and named skips.

A skip a person can still act on (`domain.stage_c.REVIEWED_SKIPS`: a photo whose card could not be isolated) routes
the card to review in the transaction that logs it: the slow path's `to-review` marker, with the skip as its reason
and no evidence, so the card awaits a person like any card the machines could not decide, and no machine votes.

Every function runs in the caller's connection; Stage C stores each card's result in a small transaction of its own
(`with engine.begin() as conn:`), so a crash loses only the cards in flight.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, func, select, text
from sqlalchemy.dialects.postgresql import insert

from stage_e_dagster.db.arrays import int_array, text_array
from stage_e_dagster.db.core.models import CardScanLog, ImageEvidence
from stage_e_dagster.db.work.predicates import CURRENT_EVIDENCE
from stage_e_dagster.domain.calculators import SLOW_PATH_ID, TO_REVIEW
from stage_e_dagster.domain.evidence.model import Evidence, EvidenceSkip
from stage_e_dagster.domain.stage_c import REVIEWED_SKIPS, SKIP_ROUTE_LABEL, CardWork, RemoteRef, evidence_columns
from stage_e_dagster.domain.work import DECIDED_BY, STAGE_C_ID

_BATCH_SQL = text(
    """
    SELECT c.id, s.location, s.kind, c.source_id, c.identifier, c.name, c.content_sha256,
           c.missing_since IS NOT NULL AS missing, c.remote_token, c.remote_url, c.content_verified, c.size_bytes,
           c.fetch_failed, e.extractor_versions,
           EXISTS (SELECT 1 FROM card_scan_log l
                   WHERE l.card_id = c.id AND l.anonymous_id = :stage_c AND l.evidence_key = c.content_sha256)
             AS skipped_before
    FROM card c
    JOIN source s ON s.id = c.source_id
    LEFT JOIN image_evidence e ON e.card_id = c.id AND e.content_sha256 = c.content_sha256
    WHERE c.id = ANY(:ids)
    ORDER BY c.id
    """
)


def load_batch(conn: Connection, card_ids: Sequence[int]) -> list[CardWork]:
    """The batch's cards with what is stored for their current bytes; unknown ids are simply absent."""
    rows = conn.execute(_BATCH_SQL, {"ids": list(card_ids), "stage_c": STAGE_C_ID}).all()
    return [
        CardWork(
            card_id=row.id,
            path="" if row.remote_token else str(Path(row.location) / row.identifier),
            content_sha256=row.content_sha256,
            stored_versions=row.extractor_versions,
            skipped_before=row.skipped_before,
            missing=row.missing,
            name=row.name,
            root="" if row.remote_token else row.location,
            remote=_remote(row),
            fetch_failed=row.fetch_failed,
        )
        for row in rows
    ]


def _remote(row) -> RemoteRef | None:
    """Where a remote card's bytes are (None for a card of a directory)."""
    if row.remote_token is None:
        return None
    ref = row.remote_url if row.kind == "http" else row.identifier
    return RemoteRef(row.source_id, ref, row.remote_token, row.content_verified, row.size_bytes)


def save_evidence(conn: Connection, card_id: int, content_sha256: str, evidence: Evidence, run_id: str | None) -> None:
    """Upsert evidence for (card, bytes): computed columns overwrite, extractor versions merge."""
    computed = set(evidence.extractor_versions)
    columns = evidence_columns(evidence, computed)
    stmt = insert(ImageEvidence).values(
        card_id=card_id, content_sha256=content_sha256, extractor_versions=evidence.extractor_versions,
        run_id=run_id, **columns,
    )
    stmt = stmt.on_conflict_do_update(
        constraint="uq_image_evidence_card_sha",
        set_={
            **{name: stmt.excluded[name] for name in columns},
            "extractor_versions": ImageEvidence.extractor_versions.op("||")(stmt.excluded.extractor_versions),
            "run_id": stmt.excluded.run_id,
            "decided_by": None,
            "carried_from_card_id": None,  # read from this card's own file now
            "updated_at": func.now(),
        },
    )
    conn.execute(stmt)


_MARK_DECIDED = text(
    f"UPDATE image_evidence AS e SET decided_by = :decided_by FROM card AS c WHERE {CURRENT_EVIDENCE} "
    "AND c.id = ANY(CAST(:ids AS bigint[])) AND e.decided_by IS DISTINCT FROM :decided_by"
)


def mark_decided(conn: Connection, card_ids: Sequence[int], decided_by: str = DECIDED_BY) -> None:
    """Mark the cards' current evidence decided by the calculators named in `decided_by`, in the deciding
    transaction (Stage C clears the mark whenever it rewrites the row)."""
    if card_ids:
        conn.execute(_MARK_DECIDED, {"ids": int_array(card_ids), "decided_by": decided_by})


def log_skip(conn: Connection, card_id: int, content_sha256: str, skip: EvidenceSkip, run_id: str | None) -> bool:
    """Record a named Stage C skip for these bytes, once: False when the same skip is already logged."""
    detail: dict[str, Any] = {k: v if isinstance(v, int | float | str | bool) or v is None else str(v)
                              for k, v in skip.detail.items()}
    exists = conn.execute(
        select(CardScanLog.id).where(
            CardScanLog.card_id == card_id, CardScanLog.anonymous_id == STAGE_C_ID,
            CardScanLog.evidence_key == content_sha256, CardScanLog.skip_reason == skip.reason,
        ).limit(1)
    ).first()
    if exists:
        return False
    conn.execute(
        insert(CardScanLog).values(
            card_id=card_id, anonymous_id=STAGE_C_ID, skip_reason=skip.reason, evidence_key=content_sha256,
            run_id=run_id, detail=detail,
        )
    )
    route_skips_to_review(conn, [card_id], run_id)
    return True


_ROUTE_SKIPS = text(
    """
    INSERT INTO card_scan_log (card_id, anonymous_id, skip_reason, evidence_key, run_id, detail)
    SELECT c.id, :slow_path, :to_review, k.key, :run_id,
           jsonb_build_object('why', jsonb_build_array(:label || ':' || l.skip_reason), 'stage_c_skip', l.skip_reason,
                              'skip_detail', l.detail, 'evidence', NULL, 'evidence_version', k.key,
                              'name', c.name, 'expansion_hint', c.expansion_hint, 'kind', c.kind)
    FROM card AS c
    JOIN LATERAL (SELECT s.skip_reason, s.detail FROM card_scan_log AS s
                  WHERE s.card_id = c.id AND s.anonymous_id = :stage_c AND s.evidence_key = c.content_sha256
                    AND s.skip_reason = ANY(CAST(:reasons AS text[]))
                  ORDER BY s.id DESC LIMIT 1) AS l ON true
    CROSS JOIN LATERAL (SELECT left(c.content_sha256, 16) || ':' || l.skip_reason AS key) AS k
    WHERE c.id = ANY(CAST(:ids AS bigint[]))
      AND NOT EXISTS (SELECT 1 FROM card_scan_log AS m WHERE m.card_id = c.id AND m.anonymous_id = :slow_path
                      AND m.skip_reason = :to_review AND m.evidence_key = k.key)
    ORDER BY c.id
    RETURNING card_id
    """
)


def route_skips_to_review(conn: Connection, card_ids: Sequence[int], run_id: str | None) -> set[int]:
    """Route to review each of the cards whose Stage C skip for its current bytes is one a person can act on
    (`REVIEWED_SKIPS`): a `to-review` marker keyed by the bytes and the reason, once, whose `why` names the skip
    (`card-finder:photo-card-cut-off`). Returns the cards routed now."""
    if not card_ids:
        return set()
    params = {"ids": int_array(sorted(set(card_ids))), "stage_c": STAGE_C_ID, "slow_path": SLOW_PATH_ID,
              "to_review": TO_REVIEW, "reasons": text_array(REVIEWED_SKIPS), "label": SKIP_ROUTE_LABEL,
              "run_id": run_id}
    return set(conn.execute(_ROUTE_SKIPS, params).scalars())
