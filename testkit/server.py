"""A real Postgres for tests, drills and benchmarks, never a mock: a throwaway embedded server, scratch databases on
it, and migrated templates that scratch databases are cloned from.

`suite_server()` resolves where the suite's server comes from (DESIGN.md): `STAGE_E_TEST_DATABASE_URL`; a
testcontainers Postgres when a Docker daemon answers; otherwise `throwaway_server()`, an embedded server in a short
temp dir with a guardian process that stops it and deletes the dir even when its owner is SIGKILLed.

A template's name carries a random suffix, so two sessions on one server never share (or drop) each other's.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg2
from sqlalchemy.engine import make_url

from stage_e_dagster.db.core.urls import libpq_dsn, normalise_url
from stage_e_dagster.postgres.server import EmbeddedPostgres
from stage_e_dagster.settings import Settings

CONNECT_TIMEOUT = 60
"""Seconds to wait for a connection: on a saturated shared host the embedded server can take many seconds."""

KEEP: set[int] = set()
"""Guardian processes started here: the leftover-process reaper (`testkit.processes`) never kills them."""


def short_tempdir(prefix: str) -> Path:
    """A new directory directly under /tmp (a Postgres socket path must stay under about 100 characters)."""
    return Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))


@contextmanager
def server_home(prefix: str = "se-t-") -> Iterator[Path]:
    """A temp dir whose `pg` subdirectory may hold an embedded server (started by the caller, or by the `stage-e`
    commands it runs), guarded: the server is stopped and the dir deleted when the block ends or when this process
    dies, whichever comes first."""
    root = short_tempdir(prefix)
    server = EmbeddedPostgres(root / "pg")
    KEEP.add(server.guard(remove=root).pid)
    try:
        yield root
    finally:
        server.destroy()
        shutil.rmtree(root, ignore_errors=True)


@contextmanager
def throwaway_server(prefix: str = "se-t-", databases: tuple[str, ...] = ()) -> Iterator[EmbeddedPostgres]:
    """An embedded server of its own, started, in a `server_home`."""
    with server_home(prefix) as root:
        server = EmbeddedPostgres(root / "pg")
        server.start(databases=databases)
        yield server


@contextmanager
def process_home(prefix: str, **settings: str) -> Iterator[Path]:
    """This process set up as an operator's shell on a throwaway STAGE_E_HOME (a `server_home`): its environment
    names the home and `settings` (STAGE_E_* variables), the database URLs resolve to the home's embedded server
    (started now), and DAGSTER_HOME is prepared with the project's instance file. For benchmarks that run the
    pipeline in process; the environment is not restored."""
    from stage_e_dagster.runtime import prepare_dagster_environment

    with server_home(prefix) as root:
        os.environ.update({"STAGE_E_HOME": str(root), "STAGE_E_DATABASE_URL": "", "STAGE_E_DAGSTER_DATABASE_URL": "",
                           **settings})
        os.environ.pop("DAGSTER_HOME", None)
        prepare_dagster_environment()
        yield root


def docker_available() -> tuple[bool, str]:
    """Whether a Docker daemon answers, and why not when it does not."""
    try:
        import docker  # type: ignore[import-untyped]

        docker.from_env(timeout=3).ping()
        return True, ""
    except Exception as err:  # noqa: BLE001 - any failure means no usable daemon
        return False, f"no Docker daemon answers ({type(err).__name__})"


@contextmanager
def suite_server() -> Iterator[str]:
    """The URL of a maintenance database on a real server the caller may create databases on."""
    settings = Settings.from_env()
    if settings.test_database_url:
        yield normalise_url(settings.test_database_url)
        return
    if not settings.test_no_docker and docker_available()[0]:
        from testcontainers.postgres import PostgresContainer

        with PostgresContainer("postgres:16-alpine", driver="psycopg2") as container:
            yield container.get_connection_url()
        return
    with throwaway_server() as server:
        commits_skip_the_disk(server.url("postgres"))
        yield server.url("postgres")



def with_database(url: str, name: str) -> str:
    """`url` pointing at database `name` on the same server."""
    return make_url(url).set(database=name).render_as_string(hide_password=False)


def admin(server_url: str):
    """An autocommit psycopg2 connection to `server_url` (CREATE and DROP DATABASE run outside transactions)."""
    conn = psycopg2.connect(libpq_dsn(server_url), connect_timeout=CONNECT_TIMEOUT)
    conn.autocommit = True
    return conn


def commits_skip_the_disk(server_url: str) -> None:
    """Make a throwaway test server's commits return before their WAL reaches the disk (`synchronous_commit = off`,
    kept in its data directory). Visibility between sessions, locks and constraints are unchanged; only a crash of
    the server could lose its last commits, and no test crashes one."""
    conn = admin(server_url)
    try:
        with conn.cursor() as cur:
            cur.execute("ALTER SYSTEM SET synchronous_commit = off")
            cur.execute("SELECT pg_reload_conf()")
    finally:
        conn.close()


def create_database(server_url: str, name: str, template: str | None = None) -> str:
    """Create database `name` (empty, or a copy of `template`); its URL.

    The copy is WAL-logged (Postgres's default strategy), not a file copy: for a template of a few megabytes that
    skips the two checkpoints a file copy forces, and the later drop then finds nothing to flush, so cloning and
    dropping cost about a third of the file copy's time (bench/clone_database.py)."""
    clone = f' TEMPLATE "{template}" STRATEGY WAL_LOG' if template else ""
    conn = admin(server_url)
    try:
        with conn.cursor() as cur:
            cur.execute(f'CREATE DATABASE "{name}"{clone}')
    finally:
        conn.close()
    return with_database(server_url, name)


def drop_database(server_url: str, name: str) -> None:
    conn = admin(server_url)
    try:
        with conn.cursor() as cur:
            cur.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        conn.close()


def release(url: str) -> None:
    """Close this process's pooled connections to `url`: a template must have no open session to be cloned, and a
    dropped database's engine must not be handed out again."""
    from stage_e_dagster.db.core.engine import get_engine

    get_engine(url).dispose()


@contextmanager
def scratch_database(server_url: str, prefix: str, template: str | None = None) -> Iterator[str]:
    """A new database on the server (empty, or cloned from `template`), dropped afterwards; yields its URL."""
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    url = create_database(server_url, name, template)
    try:
        yield url
    finally:
        release(url)
        drop_database(server_url, name)


def migrated_template(server_url: str, prefix: str = "stage_e_template") -> str:
    """A new database migrated to head, to clone scratch databases from; its name (unique to this call)."""
    from stage_e_dagster.db.core.migrate import upgrade

    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    url = create_database(server_url, name)
    upgrade(url)
    release(url)
    return name


def template_from(url: str) -> str:
    """Turn the database at `url` into a template for clones (its sessions closed); its name."""
    release(url)
    return str(make_url(url).database)
