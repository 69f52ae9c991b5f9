"""The one adapter over Dagster APIs that are not public: marking a run failed with a reason of our own.

The reaper must fail runs Dagster still calls started (their process died where Dagster could not see it), and the
run-failure sensor reads the reason back from the failure event. Dagster has no public call for that, so it is made
here, and `tests/unit/test_dagster_api.py` fails loudly when an upgrade moves these names.
"""

from __future__ import annotations

from dagster import DagsterInstance
from dagster._core.events import JobFailureData
from dagster._utils.error import SerializableErrorInfo

RECLAIMED_ERROR = "BatchReclaimed"
"""The error class name a reclaimed run's failure carries (the run-failure sensor reports its message unchanged)."""


def report_run_failed(instance: DagsterInstance, run, reason: str) -> None:
    """Mark `run` failed in Dagster with `reason` as its error."""
    error = SerializableErrorInfo(reason, [], RECLAIMED_ERROR)
    instance.report_run_failed(run, message=f"stage-e found this run dead: {reason}",
                               job_failure_data=JobFailureData(error=error, failure_reason=None))
