"""Drill `hostile-remote` (drills/hostile_remote.py says what it proves; `python -m drills hostile-remote` runs the
same): every hostile move of a manifest, a bucket or an image host a named refusal or skip, every good card done, no
batch failed, and only the lockout of a host that answered before halts the stream. The drill has one size: twelve
good scans give each source and each phase (before the lockout, after its acknowledgement) cards of their own."""

from __future__ import annotations

from drills import hostile_remote


def test_hostile_hosts_end_as_named_skips_and_only_a_real_lockout_halts():
    figures = hostile_remote.run()
    print(figures)
    assert figures["victim_requests"] == 0 and figures["ledger"].count("h") == 1
