"""The private Dagster names the control package depends on still exist and still fail a run with our reason.

A Dagster upgrade that moves `JobFailureData` or `SerializableErrorInfo`, or changes `report_run_failed`, fails
here by name instead of surfacing as a reaper that silently cannot fail stranded runs.
"""

from __future__ import annotations

import dagster as dg

from stage_e_dagster.control import dagster_api


@dg.op
def _noop() -> None:
    return None


@dg.job
def _job() -> None:
    _noop()


def test_report_run_failed_marks_the_run_failed_with_our_reason() -> None:
    with dg.instance_for_test() as instance:
        # Storage cannot matter here: the adapter only calls the instance's own API, the same on every storage.
        run = instance.create_run_for_job(_job)
        instance.handle_run_event(run.run_id, dg.DagsterEvent(
            event_type_value=dg.DagsterEventType.RUN_START.value, job_name=run.job_name))
        dagster_api.report_run_failed(instance, instance.get_run_by_id(run.run_id), "abandoned: test reason")
        assert instance.get_run_by_id(run.run_id).status == dg.DagsterRunStatus.FAILURE
        (failure,) = instance.all_logs(run.run_id, of_type=dg.DagsterEventType.RUN_FAILURE)
        error = failure.dagster_event.event_specific_data.error
        assert (error.cls_name, error.message) == (dagster_api.RECLAIMED_ERROR, "abandoned: test reason")
