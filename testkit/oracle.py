"""What a finished pipeline must show, read from the database against the design's rules, never from the code
under test's own report; and the streaming environment and GraphQL reads the live tests and drills share.

The rules checked here are the ones the schema does not already enforce: one current vote per (card, voter) (the
unique indexes only forbid the same vote twice), one evidence row per card when no file changed, and no
abstention logged twice for the same evidence.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import NullPool, create_engine

from stage_e_dagster.db.core.urls import normalise_url
from stage_e_dagster.db.reporting import invariants
from testkit import sql
from testkit.live import NEVER, Dev, Home, wait_for

RUNS = ('{ runsOrError(filter: {pipelineName: "%s"}) { ... on Runs { results { runId status '
        'creationTime tags { key value } } } } }')
ENDED = ("SUCCESS", "FAILURE", "CANCELED")
REPOSITORY = ('{ repositoriesOrError { ... on RepositoryConnection { nodes { name location { name } '
              'jobs { name } assetNodes { assetKey { path } } sensors { name sensorState { status } } '
              'schedules { name scheduleState { status } } } } } }')

UNFINISHED = """
SELECT c.id FROM card c
WHERE NOT EXISTS (SELECT 1 FROM image_evidence e WHERE e.card_id = c.id AND e.content_sha256 = c.content_sha256)
   OR NOT (EXISTS (SELECT 1 FROM card_printing_tag t WHERE t.card_id = c.id)
           OR EXISTS (SELECT 1 FROM card_scan_log l WHERE l.card_id = c.id AND l.skip_reason = 'to-review'))
"""
"""Cards without current evidence, or with neither a vote nor a routing to review."""

EVIDENCE_NOT_ONCE = "SELECT card_id, count(*) FROM image_evidence GROUP BY card_id HAVING count(*) <> 1"
"""Cards with more than one evidence row: with no file changed, a card's bytes were extracted once."""
ABSTENTION_TWICE = ("SELECT card_id, anonymous_id, skip_reason, evidence_key FROM card_scan_log "
                    "WHERE skip_reason <> 'to-review' GROUP BY 1, 2, 3, 4 HAVING count(*) > 1")
"""An abstention logged twice for the same evidence (review routings are unique by index; these are not)."""


def stream_env(home: Home, batch: int, slots: int = 1, **extra: str) -> None:
    """Stream with the card sensor every 5 s in batches of `batch`; no sweep or check run of their own; a load
    ceiling that a busy shared host does not reach (the envelope is not the subject)."""
    home.env.update({"STAGE_E_STREAMING": "on", "STAGE_E_BATCH_SIZE": str(batch),
                     "STAGE_E_OCR_MAX_SLOTS": str(slots), "STAGE_E_STREAM_INTERVAL_SECONDS": "5",
                     "STAGE_E_SWEEP_CRON": NEVER, "STAGE_E_CHECKS_CRON": NEVER, "STAGE_E_RESYNC_CRON": NEVER,
                     "STAGE_E_HOST_LOAD_CEILING": "100", **extra})


def job_runs(dev: Dev, job: str) -> list[dict[str, Any]]:
    """Dagster's runs of `job`: runId, status, creationTime (epoch seconds) and tags as a dict."""
    found = dev.query(RUNS % job)["runsOrError"]["results"]
    return [{**r, "tags": {t["key"]: t["value"] for t in r["tags"]}} for r in found]


def micro_batch_runs(dev: Dev) -> list[dict[str, Any]]:
    """Dagster's micro_batch runs (`job_runs`)."""
    return job_runs(dev, "micro_batch")


def drain_runs(dev: Dev) -> list[dict[str, Any]]:
    """Dagster's stream_drain runs (`job_runs`)."""
    return job_runs(dev, "stream_drain")


def stream_settled(home: Home) -> bool:
    """No card owes work and no batch is running."""
    return (home.scalar("SELECT count(*) FROM card_work") == 0
            and home.scalar("SELECT count(*) FROM dispatch_ledger WHERE status = 'running'") == 0)


def wait_settled(home: Home, dev: Dev, timeout: float) -> None:
    wait_for(lambda: stream_settled(home), timeout, "every card to be processed and no batch running",
             every=dev.record)
    wait_for(lambda: all(r["status"] in ENDED for r in micro_batch_runs(dev)), 120,
             "every micro_batch run to end", every=dev.record)


def duplicate_votes(target: Any) -> list[dict[str, Any]]:
    """(card, voter) pairs holding more than one vote (`db.reporting.invariants.duplicate_votes`), a sample."""
    engine = create_engine(normalise_url(sql.url_of(target)), poolclass=NullPool)
    try:
        with engine.connect() as conn:
            return invariants.duplicate_votes(conn).sample
    finally:
        engine.dispose()


def assert_nothing_twice(target: Any) -> None:
    """No (card, voter) with two votes, no card with two evidence rows, no abstention logged twice."""
    assert (votes := duplicate_votes(target)) == [], f"(card, voter) pairs with more than one vote: {votes}"
    assert (evidence := sql.rows(target, EVIDENCE_NOT_ONCE)) == [], f"cards with other than one evidence row: " \
                                                                     f"{evidence[:5]}"
    assert (logged := sql.rows(target, ABSTENTION_TWICE)) == [], f"abstentions logged twice: {logged[:5]}"


def assert_each_card_done_once(target: Any, cards: int) -> None:
    """`cards` cards, each with current evidence and a vote or a review routing, nothing twice."""
    assert sql.scalar(target, "SELECT count(*) FROM card") == cards
    unfinished = [r[0] for r in sql.rows(target, UNFINISHED)]
    assert unfinished == [], f"cards not finished: {unfinished}"
    assert_nothing_twice(target)
