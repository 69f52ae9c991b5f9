"""A separate process taking fetch turns from the shared limiter (`test_limiter.py`): prints one JSON line with the
turns' scheduled times (the database's clock) and the moments this process was let go (its own clock)."""

from __future__ import annotations

import json
import sys
import time

from sqlalchemy import create_engine, pool

from stage_e_dagster.remote.limiter import FleetLimiter


def main(url: str, rate: float, turns: int, start_at: float) -> None:
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


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]))
