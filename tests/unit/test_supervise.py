"""`supervise.Supervised`: a stop reaches the whole process group, escalates when it is ignored, and leaves no
process behind, not even one that left the group."""

from __future__ import annotations

import signal
import sys
import textwrap
import time
from pathlib import Path

import psutil

from stage_e_dagster.supervise import Supervised

SLEEPER = ("import pathlib, signal, sys, time; signal.signal(signal.SIGINT, signal.SIG_IGN); "
           "pathlib.Path(sys.argv[1]).touch(); time.sleep(300)")
"""A child that ignores Ctrl-C, and says so (a marker file) once it does: a stop sent before a loaded host let it
install its handler would kill it, and the test would blame the supervisor."""


def tree(leader_ignores_sigint: bool, ready: Path) -> list[str]:
    """A leader with two children that ignore Ctrl-C: one in its group, one in a session of its own; each child
    touches a marker in `ready` once it ignores Ctrl-C (after the leader has set up its own handling)."""
    ignore = "signal.signal(signal.SIGINT, signal.SIG_IGN)" if leader_ignores_sigint else ""
    script = textwrap.dedent(f"""
        import signal, subprocess, sys, time
        {ignore}
        subprocess.Popen([sys.executable, "-c", {SLEEPER!r}, {str(ready / "a")!r}])
        subprocess.Popen([sys.executable, "-c", {SLEEPER!r}, {str(ready / "b")!r}], start_new_session=True)
        try:
            time.sleep(300)
        except KeyboardInterrupt:
            sys.exit(0)
    """)
    return [sys.executable, "-c", script]


def started(child: Supervised, processes: int, ready: Path) -> list[int]:
    """Poll until the leader and its `processes - 1` descendants are seen and the children have said they ignore
    Ctrl-C; their pids."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        child.poll()
        if len(child.seen) >= processes and len(list(ready.iterdir())) == processes - 1:
            return sorted(child.seen)
        time.sleep(0.1)
    raise AssertionError(f"only {len(child.seen)} processes started")


def wait_exit(child: Supervised, timeout: float = 60) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        code = child.poll()
        if code is not None:
            return code
        time.sleep(0.1)
    raise AssertionError("the child did not exit")


def alive(pids: list[int]) -> list[int]:
    return [pid for pid in pids if psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE]


def test_a_stop_ends_the_leader_and_finish_ends_what_ignored_it(tmp_path):
    child = Supervised(tree(leader_ignores_sigint=False, ready=tmp_path), grace=30)
    child.start()
    pids = started(child, 3, tmp_path)
    child.stop()
    assert wait_exit(child) == 0, "the leader took the Ctrl-C and exited"
    assert len(alive(pids)) == 2, "its children ignored it"
    ended = child.finish()
    assert sorted(t.pid for t in ended) == sorted(set(pids) - {child.proc.pid})
    assert alive(pids) == []


def test_an_ignored_stop_escalates_after_the_grace(tmp_path):
    child = Supervised(tree(leader_ignores_sigint=True, ready=tmp_path), grace=1.0)
    child.start()
    pids = started(child, 3, tmp_path)
    child.stop()
    code = wait_exit(child)
    assert child.escalated and code in (-signal.SIGTERM, -signal.SIGKILL), "the ignored SIGINT was followed up"
    child.finish()
    assert alive(pids) == []


def test_the_child_stops_when_its_supervisor_is_killed_outright(tmp_path):
    """A supervisor SIGKILLed (no chance to clean up) still takes its child with it: the child gets SIGTERM."""
    pid_file = tmp_path / "child.pid"
    supervisor = textwrap.dedent(f"""
        import sys, time
        from stage_e_dagster.supervise import Supervised
        code = "import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(300)"
        child = Supervised([sys.executable, "-c", code])
        child.start()
        time.sleep(300)
    """)
    proc = psutil.Popen([sys.executable, "-c", supervisor])
    deadline = time.monotonic() + 60
    while not (pid_file.exists() and pid_file.read_text()) and time.monotonic() < deadline:
        time.sleep(0.1)
    child = psutil.Process(int(pid_file.read_text()))
    proc.kill()
    proc.wait(10)
    try:
        child.wait(30)
    except psutil.TimeoutExpired:
        child.kill()
        raise AssertionError("the child outlived its supervisor") from None
