"""Benchmark of the per-test database: cloning the migrated template and dropping the clone, by copy strategy.

Every database test gets a clone of the migrated template and drops it afterwards (`testkit.server`), so this cost
is paid a few hundred times per suite run. Prints the mean create and drop time of each strategy, interleaved in one
run on one throwaway embedded server, and their ratio. Run: `.venv/bin/python bench/clone_database.py [rounds]`.
"""

from __future__ import annotations

import subprocess
import sys
import time

from testkit import server


def measure(url: str, template: str, rounds: int) -> dict[str, tuple[float, float]]:
    """Mean seconds to create and to drop a clone of `template`, for each strategy."""
    totals = {"FILE_COPY": [0.0, 0.0], "WAL_LOG": [0.0, 0.0]}
    conn = server.admin(url)
    try:
        for i in range(rounds):
            for strategy, total in totals.items():
                name = f"clone_{strategy.lower()}_{i}"
                with conn.cursor() as cur:
                    started = time.perf_counter()
                    cur.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}" STRATEGY {strategy}')
                    created = time.perf_counter()
                    cur.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
                    total[0] += created - started
                    total[1] += time.perf_counter() - created
    finally:
        conn.close()
    return {strategy: (create / rounds, drop / rounds) for strategy, (create, drop) in totals.items()}


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    print("host load before:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    with server.throwaway_server() as srv:
        url = srv.url("postgres")
        figures = measure(url, server.migrated_template(url), rounds)
    for strategy, (create, drop) in figures.items():
        print(f"{strategy:10s} create {create * 1e3:6.0f} ms  drop {drop * 1e3:6.0f} ms  "
              f"together {(create + drop) * 1e3:6.0f} ms  (n={rounds})")
    file_copy, wal_log = (sum(figures[s]) for s in ("FILE_COPY", "WAL_LOG"))
    print(f"WAL_LOG / FILE_COPY, create and drop together: {wal_log / file_copy:.2f}")
    print("host load after:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())


if __name__ == "__main__":
    main()
