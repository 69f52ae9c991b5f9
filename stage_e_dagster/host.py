"""This host: who it is (a stable host id, a process identity), and what it can take (CPUs, OCR slots, the load
governor's target and the envelope's load ceiling).

Defaults chosen from measurements (docs/performance.md, "Load governor"; bench/governor.py, drills/governor.py): one
OCR worker per usable core leaves a core for Postgres, Dagster and the OS. Streaming at the slot cap, the pipeline's
own processes add about 1-1.4 runnable tasks besides the workers, so such a host's load sits at or above its CPU
count: a governor aiming at the CPU count would take workers away from the very work the host was sized for. It
aims at 1.5 x CPUs, and the envelope trips only at twice the CPU count, when the host is really overloaded (CPU hogs
at twice the core count beside the pipeline trip it), not under the work it was sized for.
"""

from __future__ import annotations

import os
import socket
from functools import lru_cache
from pathlib import Path

import psutil

MACHINE_ID_FILES = (Path("/etc/machine-id"), Path("/var/lib/dbus/machine-id"))


@lru_cache(maxsize=1)
def host_id() -> str:
    """A stable id for this host: the systemd/dbus machine id when there is one, else the hostname."""
    for path in MACHINE_ID_FILES:
        try:
            value = path.read_text().strip()
        except OSError:
            continue
        if value:
            return value
    return socket.gethostname()


def process_owner(pid: int | None = None) -> str:
    """`<host id>/<pid>/<start time>`: names one process uniquely across hosts and pid reuse."""
    pid = os.getpid() if pid is None else pid
    return f"{host_id()}/{pid}/{psutil.Process(pid).create_time():.2f}"


def _local_owner(owner: str | None) -> tuple[int, str] | None:
    """The pid and start time `owner` (from `process_owner`) names when it is a process of this host; None for
    another host's process or an unreadable owner."""
    try:
        host, pid_text, started = (owner or "").split("/")
        return (int(pid_text), started) if host == host_id() else None
    except ValueError:
        return None


def owner_process(owner: str | None) -> psutil.Process | None:
    """The process `owner` (from `process_owner`) names, while it runs on this host (same pid and start time);
    None for another host's process, an unreadable owner, or one that is gone."""
    if (local := _local_owner(owner)) is None:
        return None
    try:
        proc = psutil.Process(local[0])
        return proc if f"{proc.create_time():.2f}" == local[1] else None
    except psutil.Error:
        return None


def owner_is_gone(owner: str | None) -> bool:
    """True when `owner` (from `process_owner`) names a process on this host that no longer runs; False for another
    host's process, an unreadable owner, or one still running."""
    if (local := _local_owner(owner)) is None:
        return False
    try:
        return f"{psutil.Process(local[0]).create_time():.2f}" != local[1]
    except psutil.NoSuchProcess:
        return True
    except psutil.Error:
        return False


def cpus() -> int:
    """CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def usable_cores() -> int:
    """CPUs minus one left for Postgres, Dagster and the OS; at least 1 (the default OCR slot cap)."""
    return max(1, cpus() - 1)


def default_load_target() -> float:
    """The load governor's default target: 1.5 x the CPU count."""
    return 1.5 * cpus()


def default_load_ceiling() -> float:
    """The envelope's default host-load ceiling: twice the CPU count."""
    return 2.0 * cpus()
