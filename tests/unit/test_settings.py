"""Settings: one typed object read from the environment, the only reader of it, and the README's table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from stage_e_dagster.settings import Settings, SettingsError, var_name
from tools.readme_tables import configuration_table, variables

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "stage_e_dagster"


def test_defaults_when_nothing_is_set() -> None:
    settings = Settings.from_env({})
    assert settings.batch_size == 250 and settings.streaming is True and settings.consensus_policy == "funnel"
    assert settings.database_url is None and settings.ocr_max_slots is None
    assert settings.ocr_slot_scope == "host" and settings.ocr_host_id is None
    assert settings.home.is_absolute() and settings.home.name == ".stage_e"
    assert (settings.sweep_cron, settings.sweep_timezone, settings.stream_interval_seconds) == (
        "*/30 * * * *", "UTC", 10)
    assert (settings.inbox_interval_seconds, settings.drain_runs, settings.ocr_idle_grace_seconds) == (5, 1, 10.0)


def test_values_are_parsed_and_blank_counts_as_unset() -> None:
    settings = Settings.from_env({
        "STAGE_E_BATCH_SIZE": " 25 ", "STAGE_E_STREAMING": "off", "STAGE_E_HOST_LOAD_CEILING": "3.5",
        "STAGE_E_OCR_MAX_SLOTS": "", "STAGE_E_CONSENSUS_POLICY": "machine-quorum", "STAGE_E_HOME": "/tmp/se",
    })
    assert (settings.batch_size, settings.streaming, settings.host_load_ceiling) == (25, False, 3.5)
    assert settings.ocr_max_slots is None and settings.consensus_policy == "machine-quorum"
    assert settings.home == Path("/tmp/se")


def test_ocr_slot_scope_and_host_id_are_read() -> None:
    settings = Settings.from_env({"STAGE_E_OCR_SLOT_SCOPE": "global", "STAGE_E_OCR_HOST_ID": " node-a "})
    assert (settings.ocr_slot_scope, settings.ocr_host_id) == ("global", "node-a")


@pytest.mark.parametrize(("var", "value", "expected"), [
    ("STAGE_E_BATCH_SIZE", "lots", "invalid literal"),
    ("STAGE_E_BATCH_SIZE", "0", "at least 1"),
    ("STAGE_E_STREAMING", "maybe", "on/off"),
    ("STAGE_E_CONSENSUS_POLICY", "majority", "funnel, machine-quorum"),
    ("STAGE_E_OCR_ENGINE", "easyocr", "tesserocr, pytesseract"),
    ("STAGE_E_HOST_LOAD_CEILING", "-1", "above 0"),
    ("STAGE_E_HOST_LOAD_CEILING", "nan", "finite number"),
    ("STAGE_E_OCR_TASK_TIMEOUT_SECONDS", "inf", "finite number"),
    ("STAGE_E_OCR_SLOT_SCOPE", "fleet", "host, global"),
])
def test_a_bad_value_names_the_variable_and_the_form_it_wants(var: str, value: str, expected: str) -> None:
    with pytest.raises(SettingsError, match=re.escape(var)) as raised:
        Settings.from_env({var: value})
    assert expected in str(raised.value)


def test_every_setting_names_its_variable() -> None:
    assert var_name("batch_size") == "STAGE_E_BATCH_SIZE"
    names = [v.name for v in variables()]
    assert len(names) == len(set(names)) and all(name.startswith("STAGE_E_") for name in names)


def test_the_readme_configuration_table_is_the_settings() -> None:
    readme = (ROOT / "README.md").read_text()
    assert configuration_table() in readme, "regenerate the README table from settings.configuration_table()"


def test_nothing_else_in_the_package_reads_the_environment() -> None:
    allowed = {PACKAGE / "settings.py", PACKAGE / "runtime.py"}
    readers = [str(path.relative_to(ROOT)) for path in PACKAGE.rglob("*.py")
               if path not in allowed and re.search(r"os\.environ|os\.getenv|getenv\(", path.read_text())]
    assert readers == []
