"""The project declares itself to Dagster's `dg` CLI, and `dg check defs` loads and validates its definitions.

It fails when `[tool.dg]` is missing or wrong in pyproject.toml, or when the definitions do not load.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_dg_check_defs_passes() -> None:
    env = {**os.environ, "VIRTUAL_ENV": sys.prefix}
    env.pop("DAGSTER_HOME", None)
    done = subprocess.run([sys.executable, "-m", "dagster_dg_cli.cli", "check", "defs"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "All definitions loaded successfully" in done.stdout + done.stderr


def test_no_dagster_yaml_where_dagster_would_mistake_it_for_the_live_one() -> None:
    assert not (ROOT / "dagster.yaml").exists(), "the instance file ships as stage_e_dagster/dagster_instance.yaml"
