"""A process that fetches a manifest source's owed cards into a cache (`test_kill.py` kills it mid-fetch)."""

from __future__ import annotations

import sys
from pathlib import Path

from stage_e_dagster.db.core.engine import get_engine
from stage_e_dagster.domain.stage_c import StageCCounters
from tests.remote.helpers import make_fetcher, owed


def main(url: str, key: str, cache: str) -> None:
    engine = get_engine(url)
    make_fetcher(engine, Path(cache), rate=50.0, concurrency=2).fetch(owed(engine, key), StageCCounters())


if __name__ == "__main__":
    main(*sys.argv[1:4])
