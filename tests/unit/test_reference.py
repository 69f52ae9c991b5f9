"""The README's resource reference is generated from the definitions, and the README holds it verbatim; every
resource field an operator may tune is set by a `STAGE_E_*` variable."""

from __future__ import annotations

from pathlib import Path

from stage_e_dagster.definitions import build_definitions
from stage_e_dagster.settings import Settings
from tools.readme_tables import is_resource, resource_table, set_by

ROOT = Path(__file__).resolve().parents[2]

INTERNAL = {("ocr_slots", "connect_timeout_seconds")}
"""Resource fields no operator needs to change (a lock connection that cannot open in 5 s has a bigger problem)."""


def test_the_variables_behind_resource_fields_are_found_from_the_wiring():
    found = set_by()
    assert found[("ocr_slots", "wait_seconds")] == "STAGE_E_OCR_WAIT_SECONDS"
    assert found[("stream", "reclaim_after_seconds")] == "STAGE_E_RECLAIM_AFTER_SECONDS"
    assert found[("stream", "max_queued_runs")] == "STAGE_E_MAX_QUEUED_RUNS"
    assert found[("envelope", "failure_rate_ceiling")] == "STAGE_E_IMAGE_FAILURE_RATE_CEILING"
    assert found[("ocr", "throttle_retries")] == "STAGE_E_OCR_THROTTLE_RETRIES"


def test_every_tunable_resource_field_is_set_by_a_setting():
    found = set_by()
    resources = build_definitions(Settings.from_env({})).resources or {}
    plain = {(key, name) for key, resource in resources.items() for name, info in type(resource).model_fields.items()
             if name != "database_url" and not is_resource(info.annotation)}
    assert plain - set(found) == INTERNAL


def test_the_readme_resource_table_is_the_definitions():
    table = resource_table()
    assert "| `stream` (StreamControl) | `max_queued_runs` | `STAGE_E_MAX_QUEUED_RUNS` |" in table
    assert table in (ROOT / "README.md").read_text(), "regenerate it: python tools/readme_tables.py --write"
