"""The Dagster definitions load, and every resource they name is configured."""

from __future__ import annotations

from stage_e_dagster.definitions import defs


def test_definitions_load():
    repo = defs.get_repository_def()
    assert "database" in repo.get_top_level_resources()
