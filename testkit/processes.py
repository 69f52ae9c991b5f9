"""What a test must not leave behind for the next one: child processes, and changes to this process's environment.

`leftover_children(before)` kills the child processes started since `before` (a test whose assertion failed before
its cleanup), sparing the server guardians (`testkit.server.KEEP`) and multiprocessing's long-lived helpers.
`restored_environment()` puts `os.environ` back as it was: code under test that prepares its own environment
(`stage-e run` in process exports the database URLs, DAGSTER_HOME and the OCR thread limit) must not change what
the next test sees.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

import psutil

from testkit.server import KEEP


def _kept() -> set[int]:
    """The guardians, and multiprocessing's long-lived helpers (forkserver, resource tracker), started on first use."""
    from multiprocessing import forkserver, resource_tracker

    helpers = {getattr(forkserver._forkserver, "_forkserver_pid", None),
               getattr(resource_tracker._resource_tracker, "_pid", None)}
    return KEEP | {pid for pid in helpers if pid is not None}


def children() -> dict[int, psutil.Process]:
    return {proc.pid: proc for proc in psutil.Process().children(recursive=True)}


def kill_leftovers(before: set[int]) -> list[str]:
    """Kill the children not in `before` and not kept; each one described (pid and command line)."""
    kept = _kept()
    leftovers = [proc for pid, proc in children().items() if pid not in before and pid not in kept]
    described = []
    for proc in leftovers:
        try:
            described.append(f"{proc.pid} {' '.join(proc.cmdline())[:120]}")
        except psutil.Error:
            described.append(f"{proc.pid} (ended)")
        try:
            proc.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(leftovers, timeout=10)
    return described


@contextmanager
def restored_environment() -> Iterator[None]:
    """Run the block, then put `os.environ` back exactly as it was."""
    saved = dict(os.environ)
    try:
        yield
    finally:
        for key in set(os.environ) - set(saved):
            del os.environ[key]
        os.environ.update(saved)
