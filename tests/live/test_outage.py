"""A lost database: `stage-e run` cut off by a Postgres stop ends within a bounded time with one clear message, and
once Postgres is back the dead batch is reclaimed and its cards are processed by the next run.

The run and the commands are real processes against the embedded Postgres of a throwaway home (so stopping it
leaves the suite's server alone).
"""

from __future__ import annotations

import subprocess
import time

import pytest

from testkit.corpus import demo_corpus_cli
from testkit.live import STAGE_E
from testkit.oracle import assert_nothing_twice

pytestmark = pytest.mark.slow

GIVE_UP_BOUND_SECONDS = 90
"""A "never" bound: dagster-postgres gives up about 25 s after the database goes away (docs/reliability.md); a run
still waiting after this long would wait for ever."""
CARDS, BATCH = 40, 20
"""Two batches: the stop lands in the first, so cards of both lack evidence when Postgres is back."""
UNEVIDENCED = "SELECT count(*) FROM card c WHERE NOT EXISTS (SELECT 1 FROM image_evidence e WHERE e.card_id = c.id)"


def test_a_run_cut_off_by_a_postgres_stop_fails_clearly_and_its_cards_come_back(home):
    home.env["STAGE_E_RECLAIM_AFTER_SECONDS"] = "300"
    demo_corpus_cli(home, CARDS, printings=60, workers=None)

    run = subprocess.Popen([STAGE_E, "run", "--batch-size", str(BATCH)], env=home.env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and home.scalar("SELECT count(*) FROM image_evidence") < 3:
        time.sleep(0.2)
    assert home.scalar("SELECT count(*) FROM image_evidence") >= 3, "Stage C never got going"
    home.server.stop()
    stopped = time.monotonic()
    out, err = run.communicate(timeout=120)
    took = time.monotonic() - stopped
    assert run.returncode == 1
    assert "lost the database" in err and "stage-e postgres start" in err and "Traceback" not in err, err
    assert took < GIVE_UP_BOUND_SECONDS, f"the run took {took:.0f} s to give up"

    home.server.start()
    assert home.scalar(UNEVIDENCED) > 0
    status = home.stage_e("status")
    assert "reclaimed batch" in status.stderr, status.stderr
    assert home.scalar("SELECT count(*) FROM dispatch_ledger WHERE status = 'running'") == 0
    backlog_line = next(line for line in status.stdout.splitlines() if line.startswith("backlog:"))
    assert not backlog_line.startswith("backlog:  0 need evidence"), backlog_line

    home.stage_e("run", "--batch-size", str(BATCH), timeout=600)
    assert home.scalar(UNEVIDENCED) == 0
    assert home.scalar("SELECT count(*) FROM card_work") == 0
    assert_nothing_twice(home)
