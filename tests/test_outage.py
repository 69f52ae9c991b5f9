"""A lost database: `stage-e run` cut off by a Postgres stop ends within a bounded time with one clear message, and
once Postgres is back the dead batch is reclaimed and its cards are processed by the next run.

The run and the commands are real processes against an embedded Postgres of their own (so stopping it leaves the
suite's server alone).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg2
import pytest

from stage_e_dagster.db.core.urls import libpq_dsn
from stage_e_dagster.postgres.server import EmbeddedPostgres

pytestmark = pytest.mark.slow
STAGE_E = [str(Path(sys.executable).parent / "stage-e")]


def _count(url: str, sql: str) -> int:
    conn = psycopg2.connect(libpq_dsn(url))
    try:
        with conn.cursor() as cur:
            cur.execute(sql)
            return int(cur.fetchone()[0])
    finally:
        conn.close()


@pytest.fixture
def home():
    root = Path(tempfile.mkdtemp(prefix="se-o-", dir="/tmp"))
    env = {**os.environ, "STAGE_E_HOME": str(root), "DAGSTER_HOME": "", "STAGE_E_DATABASE_URL": "",
           "STAGE_E_DAGSTER_DATABASE_URL": "", "STAGE_E_RECLAIM_AFTER_SECONDS": "300"}
    env.pop("DAGSTER_HOME")
    yield root, env
    EmbeddedPostgres(root / "pg").destroy()
    shutil.rmtree(root, ignore_errors=True)


def _stage_e(env: dict[str, str], *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*STAGE_E, *args], env=env, capture_output=True, text=True, timeout=timeout)


def test_a_run_cut_off_by_a_postgres_stop_fails_clearly_and_its_cards_come_back(home):
    root, env = home
    assert _stage_e(env, "demo", "generate", "--printings", "60", "--cards", "120", "--out", str(root / "demo"),
                    "--degraded-fraction", "0").returncode == 0
    assert _stage_e(env, "catalog", "import", str(root / "demo" / "catalog.json")).returncode == 0
    assert _stage_e(env, "ingest", str(root / "demo" / "scans"), "--source", "demo").returncode == 0
    server = EmbeddedPostgres(root / "pg")
    url = server.url("stage_e")

    run = subprocess.Popen([*STAGE_E, "run", "--batch-size", "60"], env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and _count(url, "SELECT count(*) FROM image_evidence") < 3:
        time.sleep(0.2)
    assert _count(url, "SELECT count(*) FROM image_evidence") >= 3, "Stage C never got going"
    server.stop()
    stopped = time.monotonic()
    out, err = run.communicate(timeout=120)
    took = time.monotonic() - stopped
    assert run.returncode == 1
    assert "lost the database" in err and "stage-e postgres start" in err and "Traceback" not in err, err
    assert took < 90, f"the run took {took:.0f} s to give up"

    server.start()
    unfinished = _count(url, "SELECT count(*) FROM card c WHERE NOT EXISTS "
                             "(SELECT 1 FROM image_evidence e WHERE e.card_id = c.id)")
    assert unfinished > 0
    status = _stage_e(env, "status")
    assert status.returncode == 0 and "reclaimed batch" in status.stderr, status.stderr
    assert _count(url, "SELECT count(*) FROM dispatch_ledger WHERE status = 'running'") == 0
    backlog_line = next(line for line in status.stdout.splitlines() if line.startswith("backlog:"))
    assert not backlog_line.startswith("backlog:  0 need evidence"), backlog_line

    again = _stage_e(env, "run", "--batch-size", "60")
    assert again.returncode == 0, again.stderr
    assert _count(url, "SELECT count(*) FROM card c WHERE NOT EXISTS "
                       "(SELECT 1 FROM image_evidence e WHERE e.card_id = c.id)") == 0
    assert _count(url, "SELECT count(*) FROM card_work") == 0
    assert _count(url, "SELECT count(*) FROM (SELECT card_id, anonymous_id, printing_id FROM card_printing_tag "
                       "GROUP BY 1, 2, 3 HAVING count(*) > 1) d") == 0
