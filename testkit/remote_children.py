"""Separate processes of the remote-source tests, each printing what it did:

- `python -m testkit.remote_children limiter URL RATE TURNS START_AT`: takes TURNS fetch turns from the shared
  limiter, starting at the wall-clock moment START_AT; prints one JSON line with the turns' scheduled times (the
  database's clock) and the moments this process was let go (its own clock);
- `python -m testkit.remote_children fetch URL KEY CACHE`: fetches a source's owed cards into CACHE (a test kills
  it mid-fetch).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path


def take_turns(url: str, rate: float, turns: int, start_at: float) -> None:
    from sqlalchemy import create_engine, pool

    from stage_e_dagster.remote.limiter import FleetLimiter

    engine = create_engine(url, poolclass=pool.NullPool)
    limiter = FleetLimiter(engine, rate)
    time.sleep(max(0.0, start_at - time.time()))
    scheduled, started = [], []
    for _ in range(turns):
        turn = limiter.acquire()
        started.append(time.time())
        scheduled.append(turn.at)
        assert turn.shared
    print(json.dumps({"scheduled": scheduled, "started": started}), flush=True)


def fetch(url: str, key: str, cache: str) -> None:
    from stage_e_dagster.db.core.engine import get_engine
    from stage_e_dagster.domain.stage_c import StageCCounters
    from testkit.remote import make_fetcher, owed

    engine = get_engine(url)
    make_fetcher(engine, Path(cache), rate=50.0, concurrency=2).fetch(owed(engine, key), StageCCounters())


def main(argv: list[str]) -> None:
    if argv[0] == "limiter":
        take_turns(argv[1], float(argv[2]), int(argv[3]), float(argv[4]))
    elif argv[0] == "fetch":
        fetch(*argv[1:4])
    else:
        sys.exit("usage: python -m testkit.remote_children {limiter,fetch} ...")


if __name__ == "__main__":
    main(sys.argv[1:])
