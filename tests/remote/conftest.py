"""Fixtures of the remote-source tests: moto's S3-compatible server and the manifest server, both on loopback with
fault injection (`drills/remote_servers.py`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from drills.remote_servers import HttpServer, S3Server
from tests.remote.helpers import CREDENTIALS


@pytest.fixture
def s3() -> Iterator[S3Server]:
    server = S3Server()
    yield server
    server.stop()


@pytest.fixture
def web() -> Iterator[HttpServer]:
    server = HttpServer()
    yield server
    server.stop()


@pytest.fixture
def s3_env(s3: S3Server, monkeypatch) -> S3Server:
    """The S3 server, with its credential set configured in the environment as `TESTSET`."""
    for key, value in s3.credentials_env(CREDENTIALS).items():
        monkeypatch.setenv(key, value)
    return s3
