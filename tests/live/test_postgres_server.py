"""The embedded server: zero-setup start, harmless restarts, crash recovery, clear errors, and its CLI."""

from __future__ import annotations

import os
import signal

import psutil
import pytest
from click.testing import CliRunner

from stage_e_dagster.cli import main
from stage_e_dagster.postgres.server import EmbeddedPostgres, PostgresStartError
from stage_e_dagster.resources.database import AppDatabase
from testkit.server import server_home
from testkit.sql import scalar


@pytest.fixture
def home(monkeypatch):
    """A STAGE_E_HOME whose embedded server the test starts and stops itself; removed (server, lock file, log)
    afterwards."""
    with server_home("se-h-") as root:
        monkeypatch.setenv("STAGE_E_HOME", str(root))
        monkeypatch.delenv("STAGE_E_DATABASE_URL", raising=False)
        monkeypatch.delenv("STAGE_E_DAGSTER_DATABASE_URL", raising=False)
        yield root


def test_cli_start_twice_status_url_stop(home):
    runner = CliRunner()
    first = runner.invoke(main, ["postgres", "start"])
    assert first.exit_code == 0, first.output
    pid = EmbeddedPostgres(home / "pg").status().pid
    second = runner.invoke(main, ["postgres", "start"])
    assert second.exit_code == 0 and f"pid {pid}" in second.output
    url = runner.invoke(main, ["postgres", "url"])
    assert url.output.strip() == f"postgresql+psycopg2://postgres@/stage_e?host={home / 'pg'}"
    assert runner.invoke(main, ["postgres", "status"]).exit_code == 0
    assert runner.invoke(main, ["postgres", "stop"]).output.strip() == "stopped"
    status = runner.invoke(main, ["postgres", "status"])
    assert status.exit_code == 1 and "not running" in status.output
    assert runner.invoke(main, ["db", "upgrade"]).exit_code == 0  # restarts on demand


def test_stale_pid_after_a_crash_is_recovered(home):
    server = EmbeddedPostgres(home / "pg")
    server.start()
    old_pid = server.status().pid
    postmaster = psutil.Process(old_pid)
    children = postmaster.children()
    os.kill(old_pid, signal.SIGKILL)
    psutil.wait_procs([postmaster, *children], timeout=10)
    assert (home / "pg" / "postmaster.pid").exists()
    assert not server.status().running
    status = server.start(databases=("after_crash",))
    assert status.running and status.pid != old_pid


def test_pid_file_naming_a_foreign_process_is_treated_as_stale(home):
    server = EmbeddedPostgres(home / "pg")
    server.start()
    server.stop()
    pid_file = home / "pg" / "postmaster.pid"
    pid_file.write_text(f"{os.getpid()}\n{home / 'pg'}\n0\n5432\n\n\n\nready\n")
    assert not server.status().running
    assert server.start().running


def test_a_data_dir_that_is_not_a_cluster_is_a_clear_error(home):
    (home / "pg").mkdir(parents=True)
    (home / "pg" / "stray.txt").write_text("x")
    with pytest.raises(PostgresStartError, match="not empty"):
        EmbeddedPostgres(home / "pg").start()


def test_long_data_dirs_get_a_short_socket_dir(tmp_path):
    deep = tmp_path / ("d" * 90) / "pg"
    server = EmbeddedPostgres(deep)
    assert server.socket_dir != deep and len(str(server.socket_dir)) < 60


def test_start_waits_for_readiness(home):
    """`start` returns once the server accepts connections: the very next statement on the database it created
    succeeds, without a retry."""
    server = EmbeddedPostgres(home / "pg")
    status = server.start(databases=("x",))
    assert status.running
    assert scalar(server.url("x"), "SELECT current_database()") == "x"


def test_slots_command_lists_holders(home, monkeypatch):
    from stage_e_dagster.postgres.locate import app_database_url
    from stage_e_dagster.resources.ocr_slots import OcrSlots

    runner = CliRunner()
    assert runner.invoke(main, ["slots"]).output.strip() == "no OCR slots held"
    slots = OcrSlots(database=AppDatabase(database_url=app_database_url()), max_slots=1)
    with slots.acquire(1, holder="run-xyz") as held:
        assert held == [0]
        listing = runner.invoke(main, ["slots"])
    assert listing.exit_code == 0 and "run-xyz" in listing.output
