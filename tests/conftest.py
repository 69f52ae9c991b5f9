"""Test fixtures: a real Postgres for every database test, never a mock.

Resolution order (DESIGN.md): `STAGE_E_TEST_DATABASE_URL`; a testcontainers Postgres when a Docker daemon answers;
otherwise an embedded server started for this test session in a short temp dir, with a guardian process that stops it
even when pytest is SIGKILLed. Child processes a test leaves behind are killed after it (a warning names them).
Each test gets its own database cloned from a migrated template, so tests are isolated and cheap.
"""

from __future__ import annotations

import shutil
import tempfile
import uuid
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psutil
import psycopg2
import pytest
from sqlalchemy.engine import make_url

from stage_e_dagster.db.core.migrate import upgrade
from stage_e_dagster.db.core.urls import libpq_dsn, normalise_url
from stage_e_dagster.postgres.server import EmbeddedPostgres
from stage_e_dagster.settings import Settings

TEMPLATE = "stage_e_test_template"


def docker_available() -> tuple[bool, str]:
    """Whether a Docker daemon answers, and why not when it does not."""
    try:
        import docker  # type: ignore[import-untyped]

        docker.from_env(timeout=3).ping()
        return True, ""
    except Exception as err:  # noqa: BLE001 - any failure means no usable daemon
        return False, f"no Docker daemon answers ({type(err).__name__})"


@pytest.fixture(scope="session")
def pg_server_url() -> Iterator[str]:
    """URL of a maintenance database on a real server the suite may create databases on."""
    settings = Settings.from_env()
    if settings.test_database_url:
        yield normalise_url(settings.test_database_url)
        return
    if not settings.test_no_docker:
        ok, _why = docker_available()
        if ok:
            from testcontainers.postgres import PostgresContainer

            with PostgresContainer("postgres:16-alpine", driver="psycopg2") as container:
                yield container.get_connection_url()
            return
    root = Path(tempfile.mkdtemp(prefix="se-t-", dir="/tmp"))
    server = EmbeddedPostgres(root / "pg")
    guardian = server.guard(remove=root)
    _KEEP.add(guardian.pid)
    server.start()
    try:
        yield server.url("postgres")
    finally:
        server.destroy()
        shutil.rmtree(root, ignore_errors=True)


_KEEP: set[int] = set()
"""Child processes the leftover reaper never kills: the guardians of the suite's servers."""


def _kept() -> set[int]:
    """The guardians, and multiprocessing's long-lived helpers (forkserver, resource tracker), started on first use."""
    from multiprocessing import forkserver, resource_tracker

    helpers = {getattr(forkserver._forkserver, "_forkserver_pid", None),
               getattr(resource_tracker._resource_tracker, "_pid", None)}
    return _KEEP | {pid for pid in helpers if pid is not None}


def _children() -> dict[int, psutil.Process]:
    return {proc.pid: proc for proc in psutil.Process().children(recursive=True)}


@pytest.fixture(autouse=True)
def reap_leftover_children() -> Iterator[None]:
    """Kill the child processes a test left behind (e.g. when an assertion failed before its cleanup), with a warning.

    Runs after the test's own fixtures are torn down; children alive before the test (started by wider-scoped
    fixtures) and the server guardians are kept.
    """
    before = set(_children())
    yield
    kept = _kept()
    leftovers = [proc for pid, proc in _children().items() if pid not in before and pid not in kept]
    if not leftovers:
        return
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
    warnings.warn(f"killed {len(leftovers)} leftover child process(es): {'; '.join(described)}", stacklevel=1)


def _admin(url: str):
    conn = psycopg2.connect(libpq_dsn(url))
    conn.autocommit = True
    return conn


@contextmanager
def scratch_database(server_url: str, prefix: str, template: str | None = None) -> Iterator[str]:
    """A new database on the test server (empty, or cloned from `template`), dropped afterwards; yields its URL."""
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    clone = f' TEMPLATE "{template}" STRATEGY FILE_COPY' if template else ""
    admin = _admin(server_url)
    try:
        with admin.cursor() as cur:
            cur.execute(f'CREATE DATABASE "{name}"{clone}')
        yield make_url(server_url).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.cursor() as cur:
            cur.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()


@pytest.fixture(scope="session")
def template_url(pg_server_url: str) -> str:
    """A database migrated to head that per-test databases are cloned from."""
    url = make_url(pg_server_url).set(database=TEMPLATE).render_as_string(hide_password=False)
    conn = _admin(pg_server_url)
    with conn.cursor() as cur:
        cur.execute(f'DROP DATABASE IF EXISTS "{TEMPLATE}"')
        cur.execute(f'CREATE DATABASE "{TEMPLATE}"')
    conn.close()
    upgrade(url)
    return url


@pytest.fixture
def db_url(pg_server_url: str, template_url: str) -> Iterator[str]:
    """A fresh, migrated database for one test."""
    from stage_e_dagster.db.core.engine import get_engine

    with scratch_database(pg_server_url, "t", template=TEMPLATE) as url:
        yield url
        get_engine.cache_clear()


@pytest.fixture
def db_engine(db_url: str):
    """The pooled engine of the test's database: what stages, control and `db/` functions take."""
    from stage_e_dagster.db.core.engine import get_engine

    return get_engine(db_url)


@pytest.fixture
def pg_connect(db_url: str):
    """Open a separate psycopg2 connection (one per simulated process); all are closed after the test."""
    opened: list = []

    def connect(autocommit: bool = True):
        conn = psycopg2.connect(libpq_dsn(db_url))
        conn.autocommit = autocommit
        opened.append(conn)
        return conn

    yield connect
    for conn in opened:
        conn.close()


@pytest.fixture(scope="module")
def pg_dagster_instance(pg_server_url: str):
    """A Dagster instance whose run and event storage is a Postgres database of its own, as in production."""
    import dagster as dg

    with scratch_database(pg_server_url, "dg") as url:
        with dg.instance_for_test(overrides={"storage": {"postgres": {"postgres_url": url}}}) as instance:
            yield instance


@pytest.fixture(scope="module")
def shared_instance():
    from dagster import instance_for_test

    with instance_for_test() as inst:
        yield inst


@pytest.fixture
def instance(shared_instance):
    """A real (sqlite-backed) Dagster instance with an empty run storage."""
    shared_instance.wipe()
    return shared_instance


@pytest.fixture
def home():
    """A throwaway STAGE_E_HOME with an embedded Postgres of its own (see drills/live.py)."""
    from drills.live import Home

    made = Home()
    yield made
    made.server.destroy()
    shutil.rmtree(made.root, ignore_errors=True)


@pytest.fixture
def dev(home):
    """Start `stage-e dev` on `home` (each call another one); teardown kills every process each one started."""
    from drills.live import Dev

    started: list = []

    def start():
        started.append(Dev(home))
        return started[-1]

    yield start
    for one in started:
        one.kill_all()
