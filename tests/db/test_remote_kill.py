"""A process killed mid-fetch: nothing is lost (every card is fetched in the end) and no completed fetch is repeated
(the server sees no request, after the kill, for a card whose fetch had completed before it)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from sqlalchemy import text

from stage_e_dagster.domain.remote import fetch_key
from stage_e_dagster.domain.stage_c import StageCCounters
from stage_e_dagster.remote.fetch import FetchCache
from testkit.remote import add_manifest, card_state, make_fetcher, owed, sync

CHILD = [sys.executable, "-m", "testkit.remote_children", "fetch"]
ROOT = Path(__file__).resolve().parents[2]
CARDS = 8


def _verified(engine) -> int:
    with engine.connect() as conn:
        return int(conn.execute(text("SELECT count(*) FROM card WHERE content_verified")).scalar_one())


def test_a_kill_mid_fetch_loses_nothing_and_repeats_no_completed_fetch(db_url, db_engine, web, tmp_path):
    web.images = {f"c{i}.png": bytes([i]) * 20_000 for i in range(CARDS)}
    web.faults.per_key = {name: "slow" for name in web.images}
    web.faults.slow_seconds = 0.8
    add_manifest(db_engine, "cloud", web)
    sync(db_engine, "cloud")
    cache = tmp_path / "cache"
    child = subprocess.Popen([*CHILD, db_url, "cloud", str(cache)], cwd=ROOT,
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
    deadline = time.monotonic() + 120
    while _verified(db_engine) < 2 and time.monotonic() < deadline and child.poll() is None:
        time.sleep(0.05)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    killed_at = time.monotonic()
    state = card_state(db_engine, "cloud")
    completed = {name for name, s in state.items() if s[0]}  # recorded in the database
    completed |= {work.name + ".png" for work, _ in owed(db_engine, "cloud")  # or only renamed into the cache
                  if FetchCache(cache).lookup(fetch_key(work.remote.source_id, work.remote.ref, work.remote.token))}
    assert 2 <= len(completed) < CARDS, "the kill came mid-fetch: some fetches completed, some did not"
    in_flight = {s.key for s in web.record.seen} - completed

    web.faults.per_key.clear()
    counters = StageCCounters()
    tasks = make_fetcher(db_engine, cache).fetch(owed(db_engine, "cloud"), counters)
    assert len(tasks) == CARDS and all(s[0] for s in card_state(db_engine, "cloud").values()), "nothing was lost"
    again = {s.key for s in web.record.seen if s.at > killed_at}
    assert again.isdisjoint(completed), f"completed fetches were repeated: {sorted(again & completed)}"
    assert in_flight <= again, "the fetches the kill cut short were made again"
    assert counters.fetch["cached"] + counters.fetch["fetched"] == CARDS
