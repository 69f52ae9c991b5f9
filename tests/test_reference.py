"""The README's resource reference is generated from the definitions, and the README holds it verbatim."""

from __future__ import annotations

from pathlib import Path

from stage_e_dagster.reference import resource_table, set_by

ROOT = Path(__file__).resolve().parent.parent


def test_the_variables_behind_resource_fields_are_found_from_the_wiring():
    found = set_by()
    assert found[("ocr_slots", "wait_seconds")] == "STAGE_E_OCR_WAIT_SECONDS"
    assert found[("stream", "reclaim_after_seconds")] == "STAGE_E_RECLAIM_AFTER_SECONDS"
    assert found[("envelope", "trip_max_open_seconds")] == "STAGE_E_TRIP_MAX_OPEN_SECONDS"
    assert ("stream", "max_queued_runs") not in found, "no variable sets it"


def test_the_readme_resource_table_is_the_definitions():
    table = resource_table()
    assert "| `stream` (StreamControl) | `max_queued_runs` | `8` |" in table
    assert table in (ROOT / "README.md").read_text(), "regenerate it: python tools/readme_tables.py"
