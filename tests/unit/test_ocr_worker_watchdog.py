"""An OCR worker exits as soon as its owning step process ends, even while that process is an unreaped zombie
(as a killed run worker is until its parent reaps it): the slot's lock connection must not outlive its run.
And a worker starts without importing Dagster."""

from __future__ import annotations

import signal
import subprocess
import sys

import psutil

_WATCH = "import sys; from stage_e_dagster.workers.ocr_worker import _exit_with; _exit_with(int(sys.argv[1]))"


def test_the_watchdog_exits_when_its_owner_is_killed_and_left_a_zombie():
    owner = subprocess.Popen(["sleep", "120"])
    watcher = subprocess.Popen([sys.executable, "-c", _WATCH, str(owner.pid)])
    try:
        try:
            watcher.wait(timeout=3)
        except subprocess.TimeoutExpired:
            pass
        assert watcher.poll() is None, "the watchdog waits while its owner runs"
        owner.send_signal(signal.SIGKILL)  # not reaped: the owner stays a zombie, as a killed run worker can
        assert watcher.wait(timeout=30) == 3
        assert psutil.Process(owner.pid).status() == psutil.STATUS_ZOMBIE
    finally:
        for proc in (watcher, owner):
            proc.kill()
            proc.wait()


_START = """
import os, queue, sys
from stage_e_dagster.domain.evidence.read_catalog import ReadCatalog
from stage_e_dagster.workers.ocr_worker import PoolSettings, worker_main
slots = {"database_url": "postgresql+psycopg2://probe@127.0.0.1:1/nothing", "connect_timeout_seconds": 1}
results = queue.Queue()
worker_main(0, PoolSettings(workers=1, engine="tesserocr", slots=slots, holder="probe"), ReadCatalog.build([]),
            os.getppid(), queue.Queue(), results)
print(results.get_nowait()[0], sorted(m for m in sys.modules if m.split(".")[0] == "dagster"))
"""


def test_an_ocr_worker_starts_without_importing_dagster():
    """A worker starts for every streamed run, and importing Dagster cost it about a second of CPU: a worker that
    asks for its slot (here refused: the database does not answer, so the cap fails closed) imports no Dagster
    module. The resource `OcrSlots` only configures the plain `db.slots.cap.SlotCap` the worker uses."""
    out = subprocess.run([sys.executable, "-c", _START], capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["no-slot", "[]"], (out.stdout, out.stderr[-2000:])
