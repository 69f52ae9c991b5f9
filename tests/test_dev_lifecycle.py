"""`stage-e dev` live: a real `dagster dev` (webserver, daemon, code server) on an embedded Postgres of its own.

- Started with the embedded server down, it starts it; files dropped into a registered source directory become
  cards through the `source_inbox` sensor and a `sync_sources` run (the daemon, not the test, does it); the asset
  checks show on their assets in the UI's GraphQL; and Ctrl-C (SIGINT to the command's process group, as a terminal
  sends it) leaves no process behind and stops the embedded server.
- Started with the server already up, Ctrl-C leaves the server running.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil
import psycopg2
import pytest

from stage_e_dagster.db.server import EmbeddedPostgres
from stage_e_dagster.db.urls import libpq_dsn
from tests.test_sources import scan

pytestmark = pytest.mark.slow
STAGE_E = str(Path(sys.executable).parent / "stage-e")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for(check: Callable[[], Any], timeout: float, what: str, every: Callable[[], None] = lambda: None) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        every()
        value = check()
        if value:
            return value
        time.sleep(1)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


class Home:
    """A throwaway STAGE_E_HOME (a short path: the Postgres socket lives in it) and the environment to use it."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="se-d-", dir="/tmp"))
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("STAGE_E_") and k != "DAGSTER_HOME"}
        self.env.update({"STAGE_E_HOME": str(self.root), "STAGE_E_STREAMING": "off",
                         "STAGE_E_INBOX_INTERVAL_SECONDS": "5", "OMP_THREAD_LIMIT": "1"})
        self.server = EmbeddedPostgres(self.root / "pg")
        self.url = self.server.url("stage_e")

    def stage_e(self, *args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([STAGE_E, *args], env=self.env, capture_output=True, text=True, timeout=180)
        assert done.returncode == 0, done.stderr
        return done

    def scalar(self, sql: str) -> Any:
        conn = psycopg2.connect(libpq_dsn(self.url), connect_timeout=5)
        try:
            with conn.cursor() as cur:
                cur.execute(sql)
                return cur.fetchone()[0]
        finally:
            conn.close()


class Dev:
    """`stage-e dev` in a process group of its own, as a terminal runs a foreground command; every process of its
    tree is remembered while it runs."""

    def __init__(self, home: Home) -> None:
        self.port = free_port()
        self.log = (home.root / f"dev-{self.port}.log").open("wb")
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

    def kill_all(self) -> None:
        for pid, started in self.seen.items():
            try:
                proc = psutil.Process(pid)
                if proc.create_time() == started:
                    proc.kill()
            except psutil.Error:
                continue
        self.log.close()


@pytest.fixture
def home() -> Iterator[Home]:
    made = Home()
    yield made
    made.server.destroy()
    shutil.rmtree(made.root, ignore_errors=True)


@pytest.fixture
def dev(home: Home) -> Iterator[Callable[[], Dev]]:
    started: list[Dev] = []

    def start() -> Dev:
        started.append(Dev(home))
        return started[-1]

    yield start
    for one in started:
        one.kill_all()


_CHECKS = "{ assetNodes { assetKey { path } assetChecksOrError { ... on AssetChecks { checks { name } } } } }"
_SYNC_RUNS = ('{ runsOrError(filter: {pipelineName: "sync_sources"}) { ... on Runs { results { status '
              'tags { key value } } } } }')


def test_ctrl_c_stops_dagster_and_the_embedded_postgres_it_started(home, dev):
    inbox = home.root / "inbox"
    inbox.mkdir()
    home.stage_e("sources", "add", str(inbox), "--key", "inbox")  # starts the embedded server...
    home.stage_e("postgres", "stop")  # ...which is down again when `stage-e dev` starts
    assert not home.server.status().running

    running = dev()
    running.wait_ready()
    assert home.server.status().running, "stage-e dev started the embedded server"
    nodes = running.graphql(_CHECKS)["assetNodes"]
    checks = {(n["assetKey"]["path"][-1], c["name"]) for n in nodes for c in n["assetChecksOrError"]["checks"]}
    assert len(checks) == 5 and ("printing_votes", "no_duplicate_votes") in checks

    for index in range(3):  # files arrive while Dagster runs: the daemon's sensor and a sync run take them in
        partial = scan(home.root / f"card {index}.png", shade=60 * index)
        partial.replace(inbox / partial.name)
    wait_for(lambda: home.scalar("SELECT count(*) FROM card") == 3, 120, "the inbox files to become cards",
             every=running.record)
    runs = running.graphql(_SYNC_RUNS)["runsOrError"]["results"]
    assert any(r["status"] == "SUCCESS" and {"key": "dagster/sensor_name", "value": "source_inbox"} in r["tags"]
               for r in runs), runs

    assert running.ctrl_c() == 0
    assert running.left_behind() == []
    assert not home.server.status().running, "the embedded server this command started is stopped"


def test_ctrl_c_leaves_a_server_that_was_running_before(home, dev):
    home.server.start(databases=("stage_e", "dagster"))
    postmaster = home.server.status().pid
    running = dev()
    running.wait_ready()
    assert running.ctrl_c() == 0
    assert running.left_behind() == []
    status = home.server.status()
    assert status.running and status.pid == postmaster, "the server that was running before is left alone"
