"""The environment of the processes stage-e starts: Dagster (its code server, daemon and runs) and OCR workers.

Settings are read in `settings.py`; this module only writes the environment that child processes inherit: both
database URLs, a prepared DAGSTER_HOME, and one OpenMP thread per OCR process.

The Dagster instance configuration ships as `stage_e_dagster/dagster_instance.yaml`, a name Dagster never reads on
its own (a `dagster.yaml` in the working directory would draw Dagster's "will not be used" warning whenever
DAGSTER_HOME points elsewhere). `prepare_dagster_environment` writes it into the DAGSTER_HOME it prepares, which is
then the one instance file in force.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from stage_e_dagster.postgres.locate import app_database_url, dagster_database_url
from stage_e_dagster.settings import Settings, var_name

PROJECT_ROOT = Path(__file__).resolve().parent.parent
INSTANCE_TEMPLATE = Path(__file__).resolve().parent / "dagster_instance.yaml"


def limit_ocr_threads() -> None:
    """One OpenMP thread per process for Tesseract: its threads fight the worker pool, and one thread per worker
    is faster overall. Call before the OCR library loads, or before starting the processes that load it."""
    os.environ["OMP_THREAD_LIMIT"] = "1"


def prepare_dagster_environment(settings: Settings | None = None) -> Path:
    """Resolve both database URLs (starting the embedded server if needed), export them, and point DAGSTER_HOME
    at `<home>/dagster_home`, writing the project's instance file there as `dagster.yaml`, unless DAGSTER_HOME is
    already set (a deployment's own home keeps its own file)."""
    settings = settings or Settings.from_env()
    os.environ[var_name("database_url")] = app_database_url(settings)
    os.environ[var_name("dagster_database_url")] = dagster_database_url(settings)
    limit_ocr_threads()
    os.environ.setdefault("DAGSTER_RUN_STATUS_SENSOR_PROCESS_LIMIT", "100")
    if os.environ.get("DAGSTER_HOME"):
        return Path(os.environ["DAGSTER_HOME"])
    home = settings.home / "dagster_home"
    home.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(INSTANCE_TEMPLATE, home / "dagster.yaml")
    os.environ["DAGSTER_HOME"] = str(home)
    return home
