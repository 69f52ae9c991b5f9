"""Dagster instances for tests, on production's storage: dagster-postgres in a scratch database, configured from
the project's own instance file (`stage_e_dagster/dagster_instance.yaml`: run queue, run monitoring, sensor
threads), so sensor, queue, run-failure and reaper tests see what the daemon sees.

`DagsterTemplate` prepares Dagster's schema once per session in a template database; each `instance()` is a fresh
clone of it, so no run, tick or cursor crosses from one test to the next. Runs can be put straight into run storage
(`add_runs`), and the run-failure sensor can be evaluated tick by tick as the daemon does (`FailureTicker`).
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml
from dagster import DagsterInstance, DagsterRun, DagsterRunStatus, build_sensor_context, instance_for_test
from dagster._core.definitions.sensor_definition import SensorExecutionData
from dagster._core.remote_origin import InProcessCodeLocationOrigin, RemoteJobOrigin, RemoteRepositoryOrigin
from dagster._core.types.loadable_target_origin import LoadableTargetOrigin

from stage_e_dagster.job_contracts import BatchSpec
from stage_e_dagster.runtime import INSTANCE_TEMPLATE
from testkit.server import create_database, drop_database, scratch_database, with_database


def instance_config(postgres_url: str, path: Path = INSTANCE_TEMPLATE) -> dict[str, Any]:
    """The project's instance file with its storage pointed at `postgres_url`."""
    config = yaml.safe_load(path.read_text())
    config["storage"]["postgres"]["postgres_url"] = postgres_url
    return config


@contextmanager
def postgres_instance(postgres_url: str) -> Iterator[DagsterInstance]:
    """A Dagster instance with the project's settings whose storage is the database at `postgres_url`."""
    with instance_for_test(overrides=instance_config(postgres_url)) as instance:
        yield instance


def dagster_home(path: Path) -> Path:
    """A DAGSTER_HOME at `path` holding the project's instance file as `dagster.yaml`, as `stage-e dev` prepares
    one: its storage is whatever `STAGE_E_DAGSTER_DATABASE_URL` names in the environment of the process using it."""
    path.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(INSTANCE_TEMPLATE, path / "dagster.yaml")
    return path


class DagsterTemplate:
    """A database holding Dagster's schema (created by a first instance on it), to clone instances from."""

    def __init__(self, server_url: str) -> None:
        self.server_url = server_url
        self.name = f"dagster_template_{uuid.uuid4().hex[:8]}"
        url = create_database(server_url, self.name)
        with postgres_instance(url):
            pass  # dagster-postgres creates its tables on first use; its engines hold no pooled session after

    @contextmanager
    def storage(self) -> Iterator[str]:
        """The URL of a fresh clone of the template: Dagster storage for one test (or one simulated deployment)."""
        with scratch_database(self.server_url, "dg", template=self.name) as url:
            yield url

    @contextmanager
    def instance(self) -> Iterator[DagsterInstance]:
        """A fresh instance on a storage of its own."""
        with self.storage() as url, postgres_instance(url) as instance:
            yield instance

    def drop(self) -> None:
        drop_database(self.server_url, self.name)

    def url(self) -> str:
        return with_database(self.server_url, self.name)


# -- runs put straight into run storage ------------------------------------------------------------------------
_ORIGIN = RemoteJobOrigin(
    repository_origin=RemoteRepositoryOrigin(
        code_location_origin=InProcessCodeLocationOrigin(LoadableTargetOrigin(module_name="stage_e_dagster")),
        repository_name="__repository__",
    ),
    job_name="micro_batch",
)


def add_runs(instance: DagsterInstance, status: DagsterRunStatus, count: int, job: str = "micro_batch",
             card_ids: tuple[int, ...] = ()) -> list[str]:
    """Put runs straight into run storage (a queued run needs a job origin, so every one gets a stand-in), each
    carrying `card_ids` as its batch; their run ids."""
    config = BatchSpec(card_ids).run_config()
    added = []
    for _ in range(count):
        run = instance.add_run(DagsterRun(job_name=job, run_id=str(uuid.uuid4()), status=status, run_config=config,
                                          remote_job_origin=_ORIGIN))
        added.append(run.run_id)
    return added


class FailureTicker:
    """Evaluates the `record_run_failures` sensor definition as the daemon does: one tick at a time, its cursor
    persisted between ticks."""

    def __init__(self, instance: DagsterInstance, db_url: str) -> None:
        self.instance, self.db_url, self.cursor = instance, db_url, None

    def tick(self, db_url: str | None = None) -> SensorExecutionData:
        from stage_e_dagster.resources.database import AppDatabase
        from stage_e_dagster.sensors.run_failures import record_run_failures

        resources = {"database": AppDatabase(database_url=db_url or self.db_url)}
        with build_sensor_context(instance=self.instance, resources=resources, cursor=self.cursor) as ctx:
            data = record_run_failures.evaluate_tick(ctx)
        self.cursor = data.cursor  # only a tick that returned persists its cursor
        return data
