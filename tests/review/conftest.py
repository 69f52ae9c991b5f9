"""Review-page fixtures: a small real corpus seeded once per session into a template database of its own, and a
fresh clone of it for every test (seeding renders, ingests and runs Stage D; cloning is a file copy)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from testkit import server
from testkit.review import Scan, seed_corpus


@dataclass(frozen=True)
class Corpus:
    template: str
    scans: list[Scan]


@pytest.fixture(scope="session")
def review_corpus(pg_server_url: str, template_name: str, tmp_path_factory) -> Iterator[Corpus]:
    name = f"stage_e_review_{uuid.uuid4().hex[:8]}"
    url = server.create_database(pg_server_url, name, template=template_name)
    scans = seed_corpus(url, tmp_path_factory.mktemp("review-corpus"))
    server.release(url)  # a template must have no open connections
    yield Corpus(name, scans)
    server.drop_database(pg_server_url, name)


@pytest.fixture
def corpus(review_corpus: Corpus) -> list[Scan]:
    """The seeded cards (their ids are the same in every clone)."""
    return review_corpus.scans


@pytest.fixture
def review_db(pg_server_url: str, review_corpus: Corpus) -> Iterator[str]:
    """A fresh database holding the seeded corpus, for one test."""
    with server.scratch_database(pg_server_url, "rv", template=review_corpus.template) as url:
        yield url
