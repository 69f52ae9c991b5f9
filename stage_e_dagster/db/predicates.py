"""The SQL form of the work rules in `domain/work.py`, written once for every query that needs them.

Fragments expect a card aliased `c`; `CURRENT_EVIDENCE` also an `image_evidence` row aliased `e`. Bind
`predicate_params()` alongside them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from stage_e_dagster.domain.evidence.extract import EXTRACTOR_VERSIONS
from stage_e_dagster.domain.work import DECIDED_BY, STAGE_C_ID

CURRENT_EVIDENCE = (
    "e.card_id = c.id AND e.content_sha256 = c.content_sha256"
    " AND e.extractor_versions @> CAST(:current_versions AS jsonb)"
)
"""Evidence `e` is current for card `c`: it is for the card's bytes and covers every current extractor version."""

_HAS_CURRENT_EVIDENCE = f"EXISTS (SELECT 1 FROM image_evidence e WHERE {CURRENT_EVIDENCE})"
_STAGE_C_SKIPPED = (
    "EXISTS (SELECT 1 FROM card_scan_log s WHERE s.card_id = c.id AND s.anonymous_id = :stage_c_id"
    " AND s.evidence_key = c.content_sha256)"
)
NEEDS_STAGE_C = f"(NOT {_HAS_CURRENT_EVIDENCE} AND NOT {_STAGE_C_SKIPPED})"
"""No current evidence, and Stage C logged no skip for these exact bytes."""
NEEDS_STAGE_D = (
    f"EXISTS (SELECT 1 FROM image_evidence e WHERE {CURRENT_EVIDENCE} AND e.decided_by IS DISTINCT FROM :decided_by)"
)
"""Current evidence that the current calculators have not decided on yet."""
IN_RUNNING_BATCH = "EXISTS (SELECT 1 FROM dispatch_ledger d WHERE d.status = 'running' AND d.card_ids @> ARRAY[c.id])"


def predicate_params(versions: Mapping[str, str] | None = None, **extra: Any) -> dict[str, Any]:
    """Bind values for the fragments: current extractor versions (default: the code's), Stage C's voter id and
    the current `decided_by` mark."""
    current = EXTRACTOR_VERSIONS if versions is None else versions
    return {"current_versions": json.dumps(dict(current)), "stage_c_id": STAGE_C_ID, "decided_by": DECIDED_BY,
            **extra}
