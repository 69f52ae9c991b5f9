"""Draining runs as Dagster's run storage (dagster-postgres) has them.

- A draining run whose process died where Dagster could not record it (with the database, or killed while the
  database was away) reads as started until Dagster's maximum run time, and the stream starts no draining run while
  one reads as started: the reaper fails it, by the process the run tagged itself with, and leaves alone a draining
  run whose process is alive or that has not tagged itself yet.
- Two sensors ticking in the same moment can each ask for a draining run: the newer ones beyond
  `STAGE_E_DRAIN_RUNS` are surplus and end at their start; a dead one does not count."""

from __future__ import annotations

import subprocess
import sys

import dagster as dg

from stage_e_dagster.control import reaper
from stage_e_dagster.control.run_queue import active_drains, surplus_drain
from stage_e_dagster.host import process_owner
from stage_e_dagster.job_contracts import STREAM_DRAIN, TAG_OWNER
from testkit.instance import add_runs


def test_a_draining_run_whose_process_is_gone_is_failed_and_no_longer_holds_the_stream(db_engine, instance):
    gone = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    dead_owner = process_owner(gone.pid)
    gone.kill()
    gone.wait()
    dead, alive, untagged = add_runs(instance, dg.DagsterRunStatus.STARTED, 3, job=STREAM_DRAIN)
    instance.add_run_tags(dead, {TAG_OWNER: dead_owner})
    instance.add_run_tags(alive, {TAG_OWNER: process_owner()})
    assert active_drains(instance) == 3

    assert reaper.reclaim_dead_batches(instance, db_engine, 300) == []  # no ledger row was involved
    assert instance.get_run_by_id(dead).status == dg.DagsterRunStatus.FAILURE
    assert instance.get_run_by_id(alive).status == dg.DagsterRunStatus.STARTED
    assert instance.get_run_by_id(untagged).status == dg.DagsterRunStatus.STARTED
    (failure,) = instance.all_logs(dead, of_type=dg.DagsterEventType.RUN_FAILURE)
    assert dead_owner in failure.dagster_event.message and "is gone" in failure.dagster_event.message
    assert active_drains(instance) == 2, "the dead one no longer holds the stream back"

    reaper.reclaim_dead_batches(instance, db_engine, 300)
    assert len(instance.all_logs(dead, of_type=dg.DagsterEventType.RUN_FAILURE)) == 1, "failed once"


def test_the_draining_runs_beyond_the_limit_are_surplus_oldest_first(instance):
    gone = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    dead_owner = process_owner(gone.pid)
    gone.kill()
    gone.wait()
    dead, first, second, third = add_runs(instance, dg.DagsterRunStatus.STARTED, 4, job=STREAM_DRAIN)
    instance.add_run_tags(dead, {TAG_OWNER: dead_owner})
    instance.add_run_tags(second, {TAG_OWNER: process_owner()})  # tagged or not yet: alive either way

    assert [surplus_drain(instance, run, 1) for run in (first, second, third)] == [False, True, True]
    assert [surplus_drain(instance, run, 2) for run in (first, second, third)] == [False, False, True]
    instance.report_run_failed(instance.get_run_by_id(first))
    assert [surplus_drain(instance, run, 1) for run in (second, third)] == [False, True], "an ended run frees its place"
