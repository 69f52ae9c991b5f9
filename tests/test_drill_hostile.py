"""Drill 5 at a small size: the hostile corpus through the real `stage-e ingest`, `stage-e run` and
`stage-e catalog import` (drills/hostile.py says what is checked; `scripts/drills/hostile` runs it bigger)."""

from __future__ import annotations

import pytest

from drills.hostile import hostile

pytestmark = pytest.mark.slow


def test_hostile_files_end_as_named_skips_or_evidence_and_every_batch_completes(home):
    figures: dict = {}
    hostile(home, figures, good=2, grown_gb=4, catalogue_mb=48)
    assert figures["ledger"].endswith("c") and "f" not in figures["ledger"]
    assert figures["refused_at_ingest"] == 2
