"""`stage-e run --mode bulk` killed with `kill -9` mid-batch (an OOM kill, Ctrl-C twice): no ledger row stays
`running`, the dead batch's cards are processed by the next run, and `stage-e status` never reports an empty
backlog while a card lacks evidence.

Real processes (`stage-e run`, `stage-e status`) against an embedded Postgres of the test's own. The oracle is the
database: cards without an `image_evidence` row, ledger rows by status, duplicate votes. A killed run's process is
gone, so the first `stage-e status` after the kill reclaims its batch without waiting for the reaper's age.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import pytest

from testkit.corpus import demo_corpus_cli
from testkit.live import STAGE_E, wait_for
from testkit.oracle import assert_nothing_twice

pytestmark = pytest.mark.slow

CARDS, BATCH = 40, 20
"""One OCR slot and a 20-card batch: most of a second of Stage C on a quiet fast host, so a poll every 50 ms kills the
run mid-batch; the second batch's cards are still owed when the rerun starts."""
SAMPLES_DURING = 3
"""Status samples wanted while the rerun works on unfinished cards; each is a `stage-e status` process, so sampling
stops there and the test waits for the rerun."""
UNFINISHED = "SELECT count(*) FROM card c WHERE NOT EXISTS (SELECT 1 FROM image_evidence e WHERE e.card_id = c.id)"


def _status(home, samples: list[dict]) -> dict:
    """`stage-e status --json`, checked against the database: while any card lacks evidence, the backlog (outside
    or inside running batches) is not empty. Evidence is never removed, so a card that lacks it after the command
    lacked it during the command."""
    document = json.loads(home.stage_e("status", "--json").stdout)
    unfinished = home.scalar(UNFINISHED)
    backlog = document["backlog"]
    samples.append({"unfinished": unfinished, **backlog})
    if unfinished:
        assert backlog["stage_c"] + backlog["in_running_batches"] > 0, (unfinished, backlog)
    return document


def test_a_bulk_run_killed_mid_batch_is_reclaimed_and_its_cards_are_processed_by_the_next_run(home):
    demo_corpus_cli(home, CARDS)
    home.env.update({"STAGE_E_RECLAIM_AFTER_SECONDS": "10", "STAGE_E_HOST_LOAD_CEILING": "100",
                     "STAGE_E_OCR_MAX_SLOTS": "1"})
    samples: list[dict] = []

    run = subprocess.Popen([STAGE_E, "run", "--mode", "bulk", "--batch-size", str(BATCH)], env=home.env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _status(home, samples)  # while the run starts up or works on its first batch
        wait_for(lambda: home.scalar("SELECT count(*) FROM image_evidence") >= 3 or run.poll() is not None, 180,
                 "Stage C of the first batch to get going", poll=0.05)
        os.kill(run.pid, signal.SIGKILL)
        run.wait(timeout=30)
    finally:
        if run.poll() is None:
            run.kill()
    (killed,) = [row[0] for row in home.rows("SELECT run_id FROM dispatch_ledger WHERE status = 'running'")]
    stranded = home.scalar(UNFINISHED)
    assert stranded > CARDS - BATCH, "killed mid-batch: cards of the batch it was on lack evidence"

    after = _status(home, samples)  # the reaper runs from `stage-e status`
    assert home.scalar("SELECT count(*) FROM dispatch_ledger WHERE status = 'running'") == 0
    assert home.rows(f"SELECT status FROM dispatch_ledger WHERE run_id = '{killed}'") == [("failed",)]
    assert killed in after["reclaimed"]
    assert after["backlog"]["stage_c"] >= stranded and after["backlog"]["in_running_batches"] == 0

    rerun = subprocess.Popen([STAGE_E, "run", "--mode", "bulk", "--batch-size", str(BATCH)], env=home.env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    during: list[dict] = []  # samples taken wholly while the rerun was working on cards that lacked evidence
    try:
        deadline = time.monotonic() + 600
        while rerun.poll() is None and time.monotonic() < deadline and len(during) < SAMPLES_DURING:
            taken = len(samples)
            _status(home, samples)
            if rerun.poll() is None and samples[taken]["unfinished"]:
                during.append(samples[taken])
        _, errors = rerun.communicate(timeout=max(60.0, deadline - time.monotonic()))
        assert rerun.returncode == 0, errors
    finally:
        if rerun.poll() is None:
            rerun.kill()
    final = _status(home, samples)
    assert home.scalar(UNFINISHED) == 0 and final["backlog"]["stage_c"] == 0
    assert home.scalar("SELECT count(*) FROM dispatch_ledger WHERE status = 'running'") == 0
    assert home.rows("SELECT DISTINCT status FROM dispatch_ledger WHERE run_id <> "
                       f"'{killed}'") == [("completed",)]
    assert_nothing_twice(home)
    assert during, f"no status sample was taken while the rerun worked on unfinished cards: {samples}"

