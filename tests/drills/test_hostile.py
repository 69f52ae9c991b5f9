"""Drill `hostile` at a small size: the hostile corpus through the real `stage-e ingest`, `stage-e run` and
`stage-e catalog import` (drills/hostile.py says what is checked; `python -m drills hostile` runs it bigger).

Here one batch takes every card, hostile or good: it must complete with all of them in it (the drill script splits
them into batches of five)."""

from __future__ import annotations

from drills import hostile


def test_hostile_files_end_as_named_skips_or_evidence_and_every_batch_completes():
    figures = hostile.run(good=2, grown_gb=4, catalogue_mb=48, batch=50)
    print(figures)
    assert figures["ledger"].endswith("c") and "f" not in figures["ledger"]
