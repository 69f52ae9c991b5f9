"""Review-page fixtures: a small real corpus seeded once per session into a template database, and a fresh clone of
it for every test (seeding renders, ingests and runs Stage D, cloning is a file copy)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import psycopg2
import pytest
from sqlalchemy.engine import make_url

from stage_e_dagster.db.core.engine import get_engine
from stage_e_dagster.db.core.urls import libpq_dsn
from tests.conftest import TEMPLATE, scratch_database
from tests.review.helpers import Scan, seed_corpus

CORPUS_TEMPLATE = "stage_e_review_template"


@dataclass(frozen=True)
class Corpus:
    template: str
    scans: list[Scan]


@pytest.fixture(scope="session")
def review_corpus(pg_server_url: str, template_url: str, tmp_path_factory) -> Corpus:
    admin = psycopg2.connect(libpq_dsn(pg_server_url))
    admin.autocommit = True
    with admin.cursor() as cur:
        cur.execute(f'DROP DATABASE IF EXISTS "{CORPUS_TEMPLATE}"')
        cur.execute(f'CREATE DATABASE "{CORPUS_TEMPLATE}" TEMPLATE "{TEMPLATE}" STRATEGY FILE_COPY')
    admin.close()
    url = make_url(pg_server_url).set(database=CORPUS_TEMPLATE).render_as_string(hide_password=False)
    scans = seed_corpus(url, tmp_path_factory.mktemp("review-corpus"))
    get_engine(url).dispose()  # a template must have no open connections
    return Corpus(CORPUS_TEMPLATE, scans)


@pytest.fixture
def corpus(review_corpus: Corpus) -> list[Scan]:
    """The seeded cards (their ids are the same in every clone)."""
    return review_corpus.scans


@pytest.fixture
def review_db(pg_server_url: str, review_corpus: Corpus) -> Iterator[str]:
    """A fresh database holding the seeded corpus, for one test."""
    with scratch_database(pg_server_url, "rv", template=review_corpus.template) as url:
        yield url
        get_engine(url).dispose()
