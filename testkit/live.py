"""The pipeline live: a throwaway STAGE_E_HOME with its own embedded Postgres, and `stage-e dev` (webserver,
daemon, code server) in a process group of its own, driven through the UI's GraphQL API.

Every process of a `Dev` tree is remembered while it runs, so a test can assert that none is left behind and its
teardown can kill exactly what it started.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psutil

from stage_e_dagster.postgres.server import EmbeddedPostgres
from testkit import sql
from testkit.server import KEEP, commits_skip_the_disk, short_tempdir

STAGE_E = str(Path(sys.executable).parent / "stage-e")
NEVER = "0 0 1 1 *"
"""A cron that does not fire during a test or drill: schedules exist and run, but start no work of their own."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for(check: Callable[[], Any], timeout: float, what: str, every: Callable[[], None] = lambda: None,
             poll: float = 1.0) -> Any:
    """`check()`'s first truthy value, asked every `poll` seconds (calling `every()` before each ask); AssertionError
    after `timeout` seconds. A check that races a fast pipeline needs a short `poll`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        every()
        value = check()
        if value:
            return value
        time.sleep(poll)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def _home_env(root: Path) -> dict[str, str]:
    """This process's environment without its STAGE_E_* settings and DAGSTER_HOME, for the STAGE_E_HOME `root`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("STAGE_E_") and k != "DAGSTER_HOME"}
    env.update({"STAGE_E_HOME": str(root), "STAGE_E_STREAMING": "off", "STAGE_E_INBOX_INTERVAL_SECONDS": "5"})
    return env


@functools.cache
def seeded_data_dir() -> Path:
    """A stopped embedded server's data directory as a fresh home's first commands leave it (initdb, both databases,
    the application schema at head by a real `stage-e status`, Dagster's tables), made once per process on a guarded
    home of its own, so that each `Home` copies it instead of paying initdb and the migrations again."""
    from testkit.instance import postgres_instance  # imports Dagster: only where a home is made

    root = short_tempdir("se-seed-")
    server = EmbeddedPostgres(root / "pg")
    KEEP.add(server.guard(remove=root).pid)
    done = subprocess.run([STAGE_E, "status"], env=_home_env(root), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    with postgres_instance(server.url("dagster")):
        pass  # dagster-postgres creates its tables on first use, as `stage-e dev` or `run` would
    commits_skip_the_disk(server.url("postgres"))  # as on the suite's server
    server.stop()
    return server.data_dir


class Home:
    """A throwaway STAGE_E_HOME (a short path: the Postgres socket lives in it), its embedded server (guarded: it
    never outlives this process; not started: the first `stage-e` command starts it) and the environment to use
    it. `close()` removes it all. The server's data directory is a copy of `seeded_data_dir()`: what the first
    command would have created, migrated to head."""

    def __init__(self) -> None:
        self.root = short_tempdir("se-d-")
        self.env = _home_env(self.root)
        self.server = EmbeddedPostgres(self.root / "pg")
        KEEP.add(self.server.guard(remove=self.root).pid)
        subprocess.run(["cp", "-a", str(seeded_data_dir()), str(self.server.data_dir)], check=True)
        self.url = self.server.url("stage_e")

    def stage_e(self, *args: str, timeout: float = 180, env: dict[str, str] | None = None
                ) -> subprocess.CompletedProcess[str]:
        """`stage-e ARGS` in this home; AssertionError (with its stderr) unless it exits 0."""
        done = subprocess.run([STAGE_E, *args], env=env or self.env, capture_output=True, text=True,
                              timeout=timeout)
        assert done.returncode == 0, done.stderr
        return done

    def rows(self, statement: str, params: Any = None) -> list[tuple]:
        return sql.rows(self, statement, params)

    def scalar(self, statement: str, params: Any = None) -> Any:
        return sql.scalar(self, statement, params)

    def execute(self, statement: str, params: Any = None) -> int:
        return sql.execute(self, statement, params)

    def close(self) -> None:
        self.server.destroy()
        shutil.rmtree(self.root, ignore_errors=True)


@contextmanager
def home() -> Iterator[Home]:
    """A `Home` for the length of the block."""
    made = Home()
    try:
        yield made
    finally:
        made.close()


class Dev:
    """`stage-e dev` in a process group of its own, as a terminal runs a foreground command; every process of its
    tree is remembered while it runs."""

    def __init__(self, home: Home) -> None:
        self.home = home
        self.port = free_port()
        self.log_path = home.root / f"dev-{self.port}.log"
        self.log = self.log_path.open("wb")
        self.proc = subprocess.Popen([STAGE_E, "dev", "--port", str(self.port)], env=home.env, stdout=self.log,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        self.seen: dict[int, float] = {}

    def record(self) -> None:
        try:
            for proc in [psutil.Process(self.proc.pid), *psutil.Process(self.proc.pid).children(recursive=True)]:
                self.seen.setdefault(proc.pid, proc.create_time())
        except psutil.Error:
            pass

    def graphql(self, query: str) -> dict[str, Any] | None:
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}/graphql", method="POST",
                                         data=json.dumps({"query": query}).encode(),
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return json.loads(response.read())["data"]
        except (urllib.error.URLError, OSError, KeyError, ValueError):
            return None

    def query(self, text: str, timeout: float = 90) -> dict[str, Any]:
        """A GraphQL query's data, asked again while the webserver does not answer (a saturated host slows it)."""
        return wait_for(lambda: self.graphql(text), timeout, "the webserver to answer a GraphQL query")

    def output(self) -> str:
        """Everything the command printed so far (stdout and stderr)."""
        self.log.flush()
        return self.log_path.read_text(errors="replace")

    def wait_ready(self) -> None:
        wait_for(lambda: self.graphql("{ version }"), 180, "the Dagster webserver", every=self.record)

    def ctrl_c(self) -> int:
        """SIGINT to the command's process group, then wait for it to exit; its exit code."""
        self.record()
        os.killpg(self.proc.pid, signal.SIGINT)
        deadline = time.monotonic() + 120
        while self.proc.poll() is None and time.monotonic() < deadline:
            self.record()
            time.sleep(0.2)
        assert self.proc.poll() is not None, "stage-e dev did not stop within 120 s of Ctrl-C"
        return self.proc.returncode

    def left_behind(self) -> list[str]:
        """Processes of the tree still running (same pid and start time as when seen), described."""
        left = []
        for pid, started in self.seen.items():
            try:
                proc = psutil.Process(pid)
                if proc.create_time() == started and proc.status() != psutil.STATUS_ZOMBIE:
                    left.append(f"{pid} {' '.join(proc.cmdline())[:100]}")
            except psutil.Error:
                continue
        return left

    def stop(self, grace: float = 10.0) -> None:
        """Ctrl-C to the process group, `grace` seconds to wind down, then SIGKILL to whatever of the tree is left."""
        self.record()
        try:
            os.killpg(self.proc.pid, signal.SIGINT)
            self.proc.wait(timeout=grace)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass
        self.kill_all()

    def kill(self) -> None:
        """SIGKILL to the whole tree at once, for a test that does not check how the command stops: no grace."""
        self.record()
        self.kill_all()
        self.proc.wait(timeout=30)

    def kill_all(self) -> None:
        for pid, started in self.seen.items():
            try:
                proc = psutil.Process(pid)
                if proc.create_time() == started:
                    proc.kill()
            except psutil.Error:
                continue
        self.log.close()


class Devs:
    """Starts `stage-e dev` on one home as often as asked; `kill_all` kills every process each one started."""

    def __init__(self, home: Home) -> None:
        self.home, self.started = home, []

    def __call__(self) -> Dev:
        self.started.append(Dev(self.home))
        return self.started[-1]

    def kill_all(self) -> None:
        for dev in self.started:
            dev.kill_all()
