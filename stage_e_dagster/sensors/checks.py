"""The `invariant_checks` schedule: every asset check against the whole database, on `Settings.checks_cron`."""

from __future__ import annotations

from dagster import DagsterInvalidDefinitionError, DefaultScheduleStatus, ScheduleDefinition

from stage_e_dagster.job_contracts import INVARIANT_CHECKS
from stage_e_dagster.jobs import invariant_checks
from stage_e_dagster.settings import Settings, var_name


def build_invariant_checks(cron: str = Settings.checks_cron, timezone: str = Settings.sweep_timezone
                           ) -> ScheduleDefinition:
    """The schedule; a bad cron or time zone is a ValueError naming the variables to set."""
    try:
        return ScheduleDefinition(name=INVARIANT_CHECKS, job=invariant_checks, cron_schedule=cron,
                                  execution_timezone=timezone, default_status=DefaultScheduleStatus.RUNNING,
                                  description="Runs every asset check; a broken invariant fails the run.")
    except DagsterInvalidDefinitionError as err:
        raise ValueError(f"invariant checks: {err} (set {var_name('checks_cron')} / "
                         f"{var_name('sweep_timezone')})") from err
