"""An OCR worker exits as soon as its owning step process ends, even while that process is an unreaped zombie
(as a killed run worker is until its parent reaps it): the slot's lock connection must not outlive its run."""

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
