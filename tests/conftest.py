"""Fixtures: thin calls into the test kit (`testkit/`), which holds every piece of set-up the tests, drills and
benchmarks share. A real Postgres for every database test, never a mock (`testkit.server.suite_server`); each test
gets its own database cloned from a migrated template, and its own Dagster instance on production's storage.

Tests are sorted by kind into folders (docs/testing.md); each item is marked with its folder's kind, so
`-m "not live and not drill"` selects the quick suite.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path

import psycopg2
import pytest

from stage_e_dagster.db.core.urls import libpq_dsn
from testkit import live, processes, remote, server
from testkit.instance import DagsterTemplate

KINDS = {"unit": "unit", "db": "db", "live": "live", "drills": "drill", "review": "review"}


def pytest_configure(config: pytest.Config) -> None:
    for kind, what in (("unit", "no database, no processes"), ("db", "a real Postgres, in process or worker "
                       "processes"), ("live", "real `stage-e` processes on a throwaway home"),
                       ("drill", "a drill at a small size"), ("review", "the review page")):
        config.addinivalue_line("markers", f"{kind}: {what}")


FIRST = ("live", "drills")
"""Kinds run first: their tests are the longest, so the workers take them early and the short tests fill the gaps,
instead of one long test ending the run. Without them (`make test-quick`) the `slow`-marked tests go first, for the
same reason. With them, the slow tests keep their place: taken right after the live tests they run beside the last
live tests, whose daemons then wait longer and burn more of the CPU the suite is bound by (docs/testing.md has the
figures)."""


def _folder(item: pytest.Item) -> str:
    root = Path(__file__).parent
    return Path(item.path).relative_to(root).parts[0] if Path(item.path).is_relative_to(root) else ""


def pytest_itemcollected(item: pytest.Item) -> None:
    """Each item marked with its folder's kind as it is collected, so `-m` can select by kind."""
    if _folder(item) in KINDS:
        item.add_marker(KINDS[_folder(item)])


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The selected items in the order the workers take them (after `-m` has deselected the others)."""
    if any(_folder(item) in FIRST for item in items):
        items.sort(key=lambda item: _folder(item) not in FIRST)  # stable: collection order within each part
    else:
        items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture(scope="session")
def pg_server_url() -> Iterator[str]:
    """URL of a maintenance database on a real server the suite may create databases on."""
    with server.suite_server() as url:
        yield url


@pytest.fixture(scope="session")
def template_name(pg_server_url: str) -> Iterator[str]:
    """A database migrated to head (a name of this session's own) that per-test databases are cloned from."""
    name = server.migrated_template(pg_server_url)
    yield name
    server.drop_database(pg_server_url, name)


@pytest.fixture(scope="session")
def template_url(pg_server_url: str, template_name: str) -> str:
    return server.with_database(pg_server_url, template_name)


@pytest.fixture
def db_url(pg_server_url: str, template_name: str) -> Iterator[str]:
    """A fresh, migrated database for one test."""
    from stage_e_dagster.db.core.engine import get_engine

    with server.scratch_database(pg_server_url, "t", template=template_name) as url:
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


@pytest.fixture(scope="session")
def dagster_template(pg_server_url: str) -> Iterator[DagsterTemplate]:
    template = DagsterTemplate(pg_server_url)
    yield template
    template.drop()


@pytest.fixture
def instance(dagster_template: DagsterTemplate):
    """A Dagster instance of this test's own, on dagster-postgres with the project's instance settings."""
    with dagster_template.instance() as made:
        yield made


@pytest.fixture(autouse=True)
def reap_leftover_children() -> Iterator[None]:
    """Kill the child processes a test left behind (e.g. when an assertion failed before its cleanup), with a warning.

    Runs after the test's own fixtures are torn down; children alive before the test (started by wider-scoped
    fixtures) and the server guardians are kept."""
    before = set(processes.children())
    yield
    described = processes.kill_leftovers(before)
    if described:
        warnings.warn(f"killed {len(described)} leftover child process(es): {'; '.join(described)}", stacklevel=1)


@pytest.fixture(autouse=True)
def restored_environment() -> Iterator[None]:
    """`os.environ` as it was before the test, whatever the code under test exported."""
    with processes.restored_environment():
        yield


@pytest.fixture
def home() -> Iterator[live.Home]:
    """A throwaway STAGE_E_HOME with an embedded Postgres of its own."""
    with live.home() as made:
        yield made


@pytest.fixture
def dev(home: live.Home) -> Iterator[live.Devs]:
    """Start `stage-e dev` on `home` (each call another one); teardown kills every process each one started."""
    devs = live.Devs(home)
    yield devs
    devs.kill_all()


@pytest.fixture
def s3() -> Iterator[remote.S3Server]:
    """moto's S3-compatible server on loopback, with fault injection and a record of every object request."""
    with remote.s3_server() as made:
        yield made


@pytest.fixture
def s3_env() -> Iterator[remote.S3Server]:
    """The S3 server, its keys configured in the environment as the credential set `testkit.remote.CREDENTIALS`."""
    with remote.s3_server(configured=True) as made:
        yield made


@pytest.fixture
def web() -> Iterator[remote.HttpServer]:
    """A manifest server on loopback, with fault injection."""
    with remote.http_server() as made:
        yield made
