"""Bulk-insert a large, realistic card table for the scale benchmarks (`bench/sensor.py`, `bench/memory.py`).

`seed(url, cards)` fills a migrated, empty database in a few set-based statements (`generate_series`, no row per
round trip), with the triggers off while it loads (`session_replication_role = replica`) and `card_work` written
directly for the cards that need work. The mix, by card id:

- the oldest 99%: current evidence (this code's extractor versions) decided by this code's calculators; 90% of them
  hold a confident join-key vote and a third of those are marked resolved (no human vote rows are written: the
  lookups do not read them); 3% were routed to review (a `to-review` marker, no confident vote);
- the newest 1%: owed work, half Stage C (no evidence), half Stage D (evidence not decided yet); 5% of them wait
  out a retry; `RUNNING_BATCHES` batches of `BATCH` of them are in `running` ledger rows (heartbeating now);
- one completed ledger row per `BATCH` done cards, as the runs that did them would have left.

The seed then checks its own `card_work` against the full rule (`card_work_stage`) over the newest ids and a
window of the oldest: any difference is a seed bug and raises.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import create_engine, pool, text

from stage_e_dagster.db.core.urls import normalise_url
from stage_e_dagster.db.work import work_rule
from stage_e_dagster.domain.calculators import JOIN_KEY_ID, SLOW_PATH_ID, TO_REVIEW

PRINTINGS = 2_000
BATCH = 100
RUNNING_BATCHES = 4
NEEDING = 0.01
REVIEWED = 0.03
VOTED = 0.90


@dataclass(frozen=True)
class Seeded:
    cards: int
    needing: int
    running_cards: int
    review_markers: int


_LOAD = [
    # printings: a small catalogue the votes point at
    """INSERT INTO printing (id, scryfall_id, name, name_normalised, set_code, collector_number, lang)
       SELECT p, 'bench-' || p, 'Card ' || p, 'card ' || p, 's' || (p % 50), (p % 300)::text, 'en'
       FROM generate_series(1, :printings) AS p""",
    """INSERT INTO source (id, key, kind, location) VALUES (1, 'bench', 'directory', '/nonexistent/bench')""",
    # cards: ids 1..N, each with its own bytes; the newest `needing` owe work
    """INSERT INTO card (id, source_id, identifier, name, name_normalised, expansion_hint, content_sha256,
                         content_phash, size_bytes, printing_status, resolved_printing_id)
       SELECT i, 1, 'scans/' || (i / 1000) || '/card-' || i || '.png', 'Card ' || (i % :printings + 1),
              'card ' || (i % :printings + 1), NULL, md5(i::text) || md5((-i)::text), i * 7919, 250000 + i % 5000,
              CASE WHEN i <= :done AND i % 100 < 90 AND i % 3 = 0 THEN 'resolved' ELSE 'unresolved' END,
              CASE WHEN i <= :done AND i % 100 < 90 AND i % 3 = 0 THEN i % :printings + 1 END
       FROM generate_series(CAST(1 AS bigint), :cards) AS i""",
    # current evidence for the done cards and for the Stage D half of the needing ones (not decided yet)
    """INSERT INTO image_evidence (card_id, content_sha256, extractor_versions, width, height, aspect_ratio,
                                   collector_number, set_code, copyright_year, art_phash, symbol_phash,
                                   blur_variance, entropy, run_id, decided_by)
       SELECT i, md5(i::text) || md5((-i)::text), r.current_versions, 1040, 1456, 0.714, (i % 300)::text,
              's' || (i % 50), 2020, i * 31, i * 17, 250.0, 7.1, 'bench-run-' || (i / :batch),
              CASE WHEN i <= :done THEN r.decided_by END
       FROM generate_series(CAST(1 AS bigint), :cards) AS i CROSS JOIN work_rule AS r
       WHERE i <= :done OR i % 2 = 0""",
    # a confident machine vote for 90% of the done cards
    """INSERT INTO card_printing_tag (card_id, printing_id, is_no_match, anonymous_id, source, confidence, run_id)
       SELECT i, i % :printings + 1, false, :join_key, 'ocr', 0.99, 'bench-run-' || (i / :batch)
       FROM generate_series(CAST(1 AS bigint), :done) AS i WHERE i % 100 < 90""",
    # 3% of the done cards routed to review (no confident vote)
    """INSERT INTO card_scan_log (card_id, anonymous_id, skip_reason, evidence_key, run_id, detail)
       SELECT i, :slow_path, :to_review, md5(i::text) || md5((-i)::text), 'bench-run-' || (i / :batch),
              '{"why": ["no confident hit"]}'::jsonb
       FROM generate_series(CAST(1 AS bigint), :done) AS i WHERE i % 100 >= 97""",
    # the work queue: exactly the newest 1%, as the triggers would have left it
    """INSERT INTO card_work (card_id, stage, attempts, retry_at)
       SELECT i, CASE WHEN i % 2 = 0 THEN 'D' ELSE 'C' END, CASE WHEN i % 20 = 0 THEN 2 ELSE 0 END,
              CASE WHEN i % 20 = 0 THEN now() + interval '1 hour' END
       FROM generate_series(CAST(:done AS bigint) + 1, :cards) AS i""",
    # the ledger: one completed row per batch of done cards, then the running batches over needing cards
    """INSERT INTO dispatch_ledger (run_id, trigger, mode, card_ids, status, counters, started_at, finished_at,
                                   heartbeat_at)
       SELECT 'bench-run-' || b, 'card-event', 'passive',
              ARRAY(SELECT generate_series(GREATEST(b * :batch, 1), LEAST(b * :batch + :batch - 1, :done))::bigint),
              'completed', '{}'::jsonb, now() - interval '1 day', now() - interval '1 day', now() - interval '1 day'
       FROM generate_series(0, :done / :batch) AS b""",
    """INSERT INTO dispatch_ledger (run_id, trigger, mode, card_ids, status, counters, heartbeat_at, owner)
       SELECT 'bench-running-' || b, 'card-event', 'passive',
              ARRAY(SELECT generate_series(:done + 1 + b * :batch, :done + (b + 1) * :batch)::bigint),
              'running', '{}'::jsonb, now(), 'bench'
       FROM generate_series(0, :running_batches - 1) AS b""",
]


def seed(url: str, cards: int) -> Seeded:
    """Fill the migrated, empty database at `url` with `cards` cards in the mix of the module docstring."""
    needing = max(2 * BATCH * RUNNING_BATCHES, round(cards * NEEDING))
    done = cards - needing
    params = {"cards": cards, "done": done, "printings": PRINTINGS, "batch": BATCH,
              "running_batches": RUNNING_BATCHES, "join_key": JOIN_KEY_ID, "slow_path": SLOW_PATH_ID,
              "to_review": TO_REVIEW}
    engine = create_engine(normalise_url(url), poolclass=pool.NullPool)
    try:
        work_rule.sync(engine)  # the code's rule in `work_rule`, which the evidence rows copy
        with engine.begin() as conn:
            conn.execute(text("SET LOCAL session_replication_role = replica"))
            for statement in _LOAD:
                conn.execute(text(statement), params)
            for table in ("card", "printing", "source", "image_evidence", "card_printing_tag", "card_scan_log"):
                conn.execute(text(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                                  f"(SELECT coalesce(max(id), 1) FROM {table}))"))
        _check(engine, done, cards)
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(text("VACUUM ANALYZE"))
        with engine.connect() as conn:
            markers = int(conn.execute(text("SELECT count(*) FROM card_scan_log")).scalar_one())
    finally:
        engine.dispose()
    return Seeded(cards, needing, BATCH * RUNNING_BATCHES, markers)


def _check(engine, done: int, cards: int) -> None:
    """`card_work` equals the full rule over the newest 2% of ids and the oldest 1,000: else the seed is wrong."""
    windows = [(max(0, done - (cards - done)), cards), (0, 1_000)]
    with engine.begin() as conn:
        for low, high in windows:
            changed = work_rule.recompute_range(conn, low, high)
            if changed:
                raise AssertionError(f"seeded card_work differs from the rule in ({low}, {high}]: {changed} rows")
