"""Nothing left behind: a SIGKILLed test session takes its embedded Postgres with it, and a failing test's child
processes are reaped. Each test runs a real pytest session (with this suite's conftest as a plugin) in a subprocess."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
from sqlalchemy.engine import make_url

REPO = Path(__file__).resolve().parents[2]

HOLD = """
import os, time
from pathlib import Path

def test_hold(pg_server_url):
    Path(os.environ["MARK"]).write_text(pg_server_url)
    time.sleep(600)
"""

LEAVE_CHILD = """
import os, subprocess
from pathlib import Path

def test_leaves_child():
    child = subprocess.Popen(["sleep", "600"])
    Path(os.environ["MARK"]).write_text(str(child.pid))
    assert child.pid < 0, "fails before any cleanup"
"""


def _session(tmp_path: Path, source: str) -> tuple[list[str], dict[str, str]]:
    """A pytest command on a one-test file with this suite's conftest loaded as a plugin, and its environment."""
    (tmp_path / "test_inner.py").write_text(source)
    env = {k: v for k, v in os.environ.items() if not k.startswith("STAGE_E_")}
    env.update({"PYTHONPATH": str(REPO), "MARK": str(tmp_path / "mark"), "STAGE_E_TEST_NO_DOCKER": "1"})
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.conftest", "--rootdir",
            str(tmp_path), str(tmp_path / "test_inner.py")]
    return argv, env


def _wait(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def _alive(procs: list[psutil.Process]) -> list[psutil.Process]:
    return [p for p in procs if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]


def test_sigkilled_session_takes_its_postgres_along(tmp_path):
    argv, env = _session(tmp_path, HOLD)
    session = subprocess.Popen(argv, env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, start_new_session=True)
    server: list[psutil.Process] = []
    try:
        mark = tmp_path / "mark"
        url = _wait(lambda: mark.exists() and mark.read_text(), 120, "the inner session's Postgres")
        data_dir = Path(make_url(url).query["host"])
        postmaster = psutil.Process(int((data_dir / "postmaster.pid").read_text().split()[0]))
        server = [postmaster, *postmaster.children()]
        guardians = [p for p in psutil.Process(session.pid).children()
                     if "stage_e_dagster.postgres.guard" in " ".join(p.cmdline())]
        assert len(guardians) == 1, "the session's server has one guardian"
        assert "postgres" in postmaster.name() and len(server) > 1

        os.killpg(session.pid, signal.SIGKILL)
        session.wait()

        _wait(lambda: not _alive(server + guardians), 30, "the server and its guardian to end")
        assert not data_dir.parent.exists(), "the guardian deletes the session's temp dir"
    finally:
        if session.poll() is None:
            os.killpg(session.pid, signal.SIGKILL)
            session.wait()
        for proc in _alive(server):
            proc.kill()


def test_a_failing_tests_child_process_is_reaped(tmp_path):
    argv, env = _session(tmp_path, LEAVE_CHILD)
    done = subprocess.run(argv, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    pid = int((tmp_path / "mark").read_text())
    try:
        assert done.returncode == 1, done.stdout + done.stderr
        assert "1 failed" in done.stdout
        assert f"killed 1 leftover child process(es): {pid} sleep 600" in done.stdout
        assert not psutil.pid_exists(pid) or "sleep" not in psutil.Process(pid).name()
    finally:
        if psutil.pid_exists(pid) and psutil.Process(pid).cmdline() == ["sleep", "600"]:
            os.kill(pid, signal.SIGKILL)
