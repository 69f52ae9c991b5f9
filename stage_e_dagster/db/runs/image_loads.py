"""Recent image loads across every process, for the envelope's `image_failure_rate` bar.

A successful load is an `image_evidence` row (by `updated_at`, which Stage C bumps on every upsert); a failed load
is a Stage C `card_scan_log` row whose skip reason is a load failure (by `created_at`). The window is the newest
`window` rows of the union of both, recorded after the newest acknowledgement of an `image_failure_rate` trip: an
operator who acknowledges that trip has dealt with the failures behind it, so they are not judged again (judged
again, they would trip every passive run at its start, and no new load could ever dilute them).
"""

from __future__ import annotations

from sqlalchemy import Connection, text

from stage_e_dagster.domain.envelope import FAILURE_RATE_BAR, LoadCounts
from stage_e_dagster.domain.work import LOAD_FAILURES, STAGE_C_ID

_RECENT_LOADS = text(
    """
    WITH judged_since AS (
        SELECT coalesce(max(acknowledged_at), '-infinity') AS at FROM envelope_trip
        WHERE bar = :bar AND acknowledged_at IS NOT NULL
    )
    SELECT count(*) AS loads, count(*) FILTER (WHERE failed) AS failures
    FROM (
        SELECT at, failed FROM (
            (SELECT updated_at AS at, false AS failed FROM image_evidence
             WHERE updated_at > (SELECT at FROM judged_since)
             ORDER BY updated_at DESC LIMIT :window)
            UNION ALL
            (SELECT created_at AS at, true AS failed FROM card_scan_log
             WHERE anonymous_id = :stage_c AND skip_reason = ANY(:reasons)
               AND created_at > (SELECT at FROM judged_since)
             ORDER BY created_at DESC LIMIT :window)
        ) AS both_kinds
        ORDER BY at DESC
        LIMIT :window
    ) AS recent
    """
)


def recent_load_counts(conn: Connection, window: int = 500) -> LoadCounts:
    """Loads and failures among the newest `window` image loads recorded by any process since the newest
    acknowledged `image_failure_rate` trip."""
    if window < 1:
        raise ValueError(f"window must be at least 1, got {window}")
    params = {"window": window, "stage_c": STAGE_C_ID, "reasons": list(LOAD_FAILURES), "bar": FAILURE_RATE_BAR}
    row = conn.execute(_RECENT_LOADS, params).one()
    return LoadCounts(loads=int(row.loads), failures=int(row.failures))
