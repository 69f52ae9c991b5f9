"""Running a process tree that one key stops: a child in its own process group, signals forwarded, nothing left.

`stage-e dev` runs `dg dev` through `Supervised`. The child starts in a new session (so a terminal's Ctrl-C
reaches only `stage-e dev`, which decides what to do with it) with SIGINT and SIGTERM at their defaults (a shell
starts background jobs with SIGINT ignored, which children would inherit: Dagster then ignores Ctrl-C). A stop
sends SIGINT to the whole group, as a terminal would, so Dagster shuts its webserver, daemon, code server and
runs down in order; after `grace` seconds (or at once on `kill()`) the group gets SIGTERM, then SIGKILL.

The child also gets SIGTERM if the supervisor itself dies (killed outright): Dagster treats it as Ctrl-C.
Processes that leave the group's tree before the end (a run worker orphaned when its code server exits) are
remembered while they run: every `poll()` records the group's descendants, and `finish()` ends whichever of them is
still alive, so a stop leaves no process behind.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import psutil

TERM_GRACE_SECONDS = 5.0
PR_SET_PDEATHSIG = 1


@dataclass(frozen=True)
class Tracked:
    """A process seen in the tree: its pid, start time (to tell it from a later process with the same pid) and
    command line."""

    pid: int
    started: float
    cmdline: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f"{self.pid} ({' '.join(self.cmdline)[:80]})"

    def alive(self) -> psutil.Process | None:
        """The process if it still runs (not a zombie) and is the one seen, else None."""
        try:
            proc = psutil.Process(self.pid)
            if proc.create_time() != self.started or proc.status() == psutil.STATUS_ZOMBIE:
                return None
            return proc
        except psutil.Error:
            return None


@dataclass
class Supervised:
    """One supervised child process tree (see the module docstring)."""

    argv: Sequence[str]
    cwd: Path | None = None
    env: Mapping[str, str] | None = None
    grace: float = 30.0
    proc: subprocess.Popen[bytes] | None = None
    seen: dict[int, Tracked] = field(default_factory=dict)
    stop_sent_at: float | None = None
    escalated: bool = False

    def start(self) -> None:
        """Start the child (call it before starting threads: the child's set-up runs between fork and exec)."""

        def defaults() -> None:
            for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                signal.signal(sig, signal.SIG_DFL)
            _terminate_with_parent()

        self.proc = subprocess.Popen(list(self.argv), cwd=self.cwd, env=dict(self.env) if self.env else None,
                                     start_new_session=True, preexec_fn=defaults)
        self._remember(self.proc.pid)

    @property
    def pgid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def poll(self) -> int | None:
        """Record the tree's processes; the child's exit code once it ended (None while it runs). Escalates a stop
        to SIGTERM and SIGKILL once its grace has passed."""
        assert self.proc is not None
        code = self.proc.poll()
        if code is None:
            self._record_tree()
            if self.stop_sent_at is not None and time.monotonic() - self.stop_sent_at > self.grace:
                self.kill()
        return code

    def stop(self) -> None:
        """Ask the whole group to stop, as Ctrl-C in a terminal would (SIGINT to every process in it)."""
        if self.stop_sent_at is None:
            self.stop_sent_at = time.monotonic()
            self._signal_group(signal.SIGINT)

    def kill(self) -> None:
        """Stop now: SIGTERM to the group and every process seen, SIGKILL to whatever is left after a short
        grace."""
        if self.escalated:
            return
        self.escalated = True
        self._record_tree()
        self._signal_group(signal.SIGTERM)
        left = self._alive()
        for proc in left:
            _send(proc, signal.SIGTERM)
        self._end(left, TERM_GRACE_SECONDS)

    def finish(self) -> list[Tracked]:
        """After the child exited: end every remembered process still running (group members and orphans alike);
        returns those that had to be ended."""
        left = self._alive()
        if left:
            for proc in left:
                _send(proc, signal.SIGTERM)
            self._end(left, TERM_GRACE_SECONDS)
        return [self.seen[proc.pid] for proc in left if proc.pid in self.seen]

    # -- internals ---------------------------------------------------------------------------------------------
    def _remember(self, pid: int) -> None:
        try:
            proc = psutil.Process(pid)
            self.seen.setdefault(pid, Tracked(pid, proc.create_time(), tuple(proc.cmdline())))
        except psutil.Error:
            pass

    def _record_tree(self) -> None:
        assert self.proc is not None
        try:
            root = psutil.Process(self.proc.pid)
            members = root.children(recursive=True)
        except psutil.Error:
            members = []
        for proc in members:
            self._remember(proc.pid)
        for proc in _group_members(self.pgid):
            self._remember(proc.pid)

    def _alive(self) -> list[psutil.Process]:
        alive = {p.pid: p for t in self.seen.values() if (p := t.alive()) is not None}
        for proc in _group_members(self.pgid):
            alive.setdefault(proc.pid, proc)
        return [p for pid, p in alive.items() if pid != os.getpid()]

    def _signal_group(self, sig: signal.Signals) -> None:
        try:
            os.killpg(self.pgid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def _end(self, procs: list[psutil.Process], grace: float) -> None:
        """Wait up to `grace` for `procs` to end, then SIGKILL the rest. The child itself is waited for through its
        Popen, never by psutil, which would reap it and lose its exit code."""
        assert self.proc is not None
        others = [proc for proc in procs if proc.pid != self.proc.pid]
        leader = len(others) < len(procs)
        deadline = time.monotonic() + grace
        _gone, alive = psutil.wait_procs(others, timeout=grace)
        if leader:
            try:
                self.proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                self.proc.kill()
        for proc in alive:
            _send(proc, signal.SIGKILL)
        psutil.wait_procs(alive, timeout=grace)


def _terminate_with_parent() -> None:
    """Ask Linux to send this process SIGTERM when its parent dies (`PR_SET_PDEATHSIG`), so a supervisor killed
    outright (SIGKILL) still stops its child, which stops its own tree; elsewhere a no-op."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM))
    except (OSError, AttributeError):
        pass


def _send(proc: psutil.Process, sig: signal.Signals) -> None:
    try:
        proc.send_signal(sig)
    except psutil.Error:
        pass


def _group_members(pgid: int) -> list[psutil.Process]:
    """Live processes whose process group is `pgid`."""
    members = []
    for proc in psutil.process_iter():
        try:
            if os.getpgid(proc.pid) == pgid and proc.status() != psutil.STATUS_ZOMBIE:
                members.append(proc)
        except (ProcessLookupError, PermissionError, psutil.Error):
            continue
    return members
