"""Shared pieces of the live-daemon drills: demo cards in a `Home`, the streaming environment, the database oracle
(every card finished, nothing written twice) and the GraphQL queries that read Dagster's view of the runs.

The oracle reads the database's final state against the pipeline's rules, never the code under test's own report.
"""

from __future__ import annotations

from typing import Any

import psycopg2

from drills.live import Dev, Home, wait_for
from stage_e_dagster.db.core.urls import libpq_dsn

NEVER = "0 0 1 1 *"
"""A cron that does not fire during a drill: schedules exist and run, but do not start work of their own."""

RUNS = ('{ runsOrError(filter: {pipelineName: "micro_batch"}) { ... on Runs { results { runId status '
        'creationTime tags { key value } } } } }')
REPOSITORY = ('{ repositoriesOrError { ... on RepositoryConnection { nodes { name location { name } '
              'jobs { name } assetNodes { assetKey { path } } sensors { name sensorState { status } } '
              'schedules { name scheduleState { status } } } } } }')


CONNECT_TIMEOUT = 60
"""Seconds to wait for a connection: on a saturated shared host the embedded server can take many seconds."""


def connect(home: Home):
    return psycopg2.connect(libpq_dsn(home.url), connect_timeout=CONNECT_TIMEOUT)


def rows(home: Home, sql: str, params: Any = None) -> list[tuple]:
    conn = connect(home)
    try:
        with conn.cursor() as cur:
            cur.execute(sql, params)
            return cur.fetchall()
    finally:
        conn.close()


def scalar(home: Home, sql: str, params: Any = None) -> Any:
    return rows(home, sql, params)[0][0]


def execute(home: Home, sql: str, params: Any = None) -> int:
    """Run one statement in its own committed transaction; the rows it touched."""
    conn = connect(home)
    try:
        with conn, conn.cursor() as cur:
            cur.execute(sql, params)
            return cur.rowcount
    finally:
        conn.close()


def prepare_cards(home: Home, cards: int, printings: int = 150) -> None:
    """Generate `cards` clean demo scans, import their catalogue and ingest them: cards that need Stage C and D."""
    data = home.root / "demo"
    home.stage_e("demo", "generate", "--printings", str(printings), "--cards", str(cards), "--out", str(data),
                 "--degraded-fraction", "0", "--workers", "1")
    home.stage_e("catalog", "import", str(data / "catalog.json"), "--symbols", str(data / "symbols"))
    home.stage_e("ingest", str(data / "scans"), "--source", "demo")


def stream_env(home: Home, batch: int, slots: int = 1, **extra: str) -> None:
    """Stream with the card sensor every 5 s in batches of `batch`; no sweep or check run of their own; a load
    ceiling that a busy shared host does not reach (these drills are not about the envelope)."""
    home.env.update({"STAGE_E_STREAMING": "on", "STAGE_E_BATCH_SIZE": str(batch),
                     "STAGE_E_OCR_MAX_SLOTS": str(slots), "STAGE_E_STREAM_INTERVAL_SECONDS": "5",
                     "STAGE_E_SWEEP_CRON": NEVER, "STAGE_E_CHECKS_CRON": NEVER, "STAGE_E_RESYNC_CRON": NEVER,
                     "STAGE_E_HOST_LOAD_CEILING": "100", **extra})


def query(dev: Dev, text: str, timeout: float = 90) -> dict[str, Any]:
    """A GraphQL query's data, asked again while the webserver does not answer (a saturated host slows it)."""
    return wait_for(lambda: dev.graphql(text), timeout, "the webserver to answer a GraphQL query")


def micro_batch_runs(dev: Dev) -> list[dict[str, Any]]:
    """Dagster's micro_batch runs: runId, status, creationTime (epoch seconds) and tags as a dict."""
    found = query(dev, RUNS)["runsOrError"]["results"]
    return [{**r, "tags": {t["key"]: t["value"] for t in r["tags"]}} for r in found]


def stream_settled(home: Home) -> bool:
    """No card owes work and no batch is running."""
    return (scalar(home, "SELECT count(*) FROM card_work") == 0
            and scalar(home, "SELECT count(*) FROM dispatch_ledger WHERE status = 'running'") == 0)


def wait_settled(home: Home, dev: Dev, timeout: float) -> None:
    wait_for(lambda: stream_settled(home), timeout, "every card to be processed and no batch running",
             every=dev.record)
    wait_for(lambda: all(r["status"] in ("SUCCESS", "FAILURE", "CANCELED") for r in micro_batch_runs(dev)), 120,
             "every micro_batch run to end", every=dev.record)


UNFINISHED = """
SELECT c.id FROM card c
WHERE NOT EXISTS (SELECT 1 FROM image_evidence e WHERE e.card_id = c.id AND e.content_sha256 = c.content_sha256)
   OR NOT (EXISTS (SELECT 1 FROM card_printing_tag t WHERE t.card_id = c.id)
           OR EXISTS (SELECT 1 FROM card_scan_log l WHERE l.card_id = c.id AND l.skip_reason = 'to-review'))
"""
"""Cards without current evidence, or with neither a vote nor a routing to review."""

DUPLICATES = {
    "evidence": "SELECT card_id, content_sha256 FROM image_evidence GROUP BY 1, 2 HAVING count(*) > 1",
    "votes": "SELECT card_id, printing_id, anonymous_id, is_no_match FROM card_printing_tag "
             "GROUP BY 1, 2, 3, 4 HAVING count(*) > 1",
    "scan_log": "SELECT card_id, anonymous_id, skip_reason, evidence_key FROM card_scan_log "
                "GROUP BY 1, 2, 3, 4 HAVING count(*) > 1",
}
"""What must never be written twice: evidence per (card, bytes), a vote per (card, printing, voter), an abstention
or review routing per (card, voter, reason, evidence)."""


def assert_each_card_done_once(home: Home, cards: int) -> None:
    """The oracle: `cards` cards, each with current evidence and a vote or a review routing, nothing twice."""
    assert scalar(home, "SELECT count(*) FROM card") == cards
    unfinished = [r[0] for r in rows(home, UNFINISHED)]
    assert unfinished == [], f"cards not finished: {unfinished}"
    for what, sql in DUPLICATES.items():
        found = rows(home, sql)
        assert found == [], f"duplicate {what}: {found[:5]}"
