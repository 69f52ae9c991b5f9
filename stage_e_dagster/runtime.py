"""The process environment Dagster needs: database URLs in the environment and a prepared DAGSTER_HOME."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from stage_e_dagster.db.urls import APP_URL_VAR, DAGSTER_URL_VAR, app_database_url, dagster_database_url, stage_e_home

PROJECT_ROOT = Path(__file__).resolve().parent.parent


def prepare_dagster_environment() -> Path:
    """Resolve both database URLs (starting the embedded server if needed), export them, and point DAGSTER_HOME
    at `$STAGE_E_HOME/dagster_home` holding the project's dagster.yaml unless DAGSTER_HOME is already set."""
    os.environ[APP_URL_VAR] = app_database_url()
    os.environ[DAGSTER_URL_VAR] = dagster_database_url()
    os.environ.setdefault("OMP_THREAD_LIMIT", "1")
    os.environ.setdefault("DAGSTER_RUN_STATUS_SENSOR_PROCESS_LIMIT", "100")
    if os.environ.get("DAGSTER_HOME"):
        return Path(os.environ["DAGSTER_HOME"])
    home = stage_e_home() / "dagster_home"
    home.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(PROJECT_ROOT / "dagster.yaml", home / "dagster.yaml")
    os.environ["DAGSTER_HOME"] = str(home)
    return home
