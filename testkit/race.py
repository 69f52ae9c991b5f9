"""Races between connections, for the lock tests: racers released together by a barrier, each on a connection of its
own, and a gate that makes them meet at the lock under test.

A bare start behind a barrier rarely makes two short transactions overlap at the one statement that matters. So a
race can first close a gate: a third connection holds a row lock (or a table lock) that every racer's transaction
reaches; the racers start together and pile up behind it (`pile_up` waits until the server says that many sessions
wait on the gate), and opening the gate lets them through in the order they queued. With the lock under test in
place they go one at a time and the later ones see the first one's work; with it removed they go at once. The oracle
is then the database's final state, checked against the rule the lock keeps.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from testkit.live import wait_for
from testkit.sql import connect, scalar

RACE_TIMEOUT = 60.0
"""A never-bound: a racer still running this long after the start is stuck (a lock never released)."""


@dataclass
class Outcome:
    """What one racer did: its return value, or the exception it raised."""

    value: Any = None
    error: BaseException | None = None

    def result(self) -> Any:
        if self.error is not None:
            raise self.error
        return self.value


class Race:
    """Racers started on threads of their own behind one barrier; `join` gives each one's outcome, in order."""

    def __init__(self, *racers: Callable[[], Any]) -> None:
        self.outcomes = [Outcome() for _ in racers]
        barrier = threading.Barrier(len(racers))

        def run(racer: Callable[[], Any], outcome: Outcome) -> None:
            try:
                barrier.wait(RACE_TIMEOUT)
                outcome.value = racer()
            except BaseException as err:  # noqa: BLE001 - handed to the test's thread
                outcome.error = err

        self.threads = [threading.Thread(target=run, args=pair, daemon=True) for pair in zip(racers, self.outcomes,
                                                                                            strict=True)]
        for thread in self.threads:
            thread.start()

    def join(self) -> list[Outcome]:
        for thread in self.threads:
            thread.join(RACE_TIMEOUT)
            assert not thread.is_alive(), "a racer is still running: a lock was never released"
        return self.outcomes


def race(*racers: Callable[[], Any]) -> list[Outcome]:
    """Run the racers at once, each on a thread of its own, released together by a barrier; their outcomes."""
    return Race(*racers).join()


@contextmanager
def gate(url: str, sql: str, params: Any = None) -> Iterator[Any]:
    """A connection holding the locks `sql` takes (e.g. `SELECT ... FOR UPDATE`, `LOCK TABLE ...`) in an open
    transaction until the block ends; yields that connection (its `get_backend_pid()` names the gate)."""
    conn = connect(url, autocommit=False)
    try:
        with conn.cursor() as cur:
            cur.execute(sql, params)
        yield conn
        conn.commit()
    finally:
        conn.close()


def waiting_behind(url: str, holder: Any) -> int:
    """How many sessions wait for a lock that `holder` (a connection) holds, directly or in line behind another."""
    return int(scalar(url, "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                           "AND datname = current_database() AND pid <> %s", (holder.get_backend_pid(),)))


def pile_up(url: str, holder: Any, count: int, what: str = "the racers") -> None:
    """Wait until `count` sessions wait on a lock (behind the gate `holder`, or in line behind one another)."""
    wait_for(lambda: waiting_behind(url, holder) >= count, RACE_TIMEOUT, f"{what} to queue at the gate", poll=0.02)


def raced_behind_gate(url: str, gate_sql: str, params: Any, *racers: Callable[[], Any]) -> list[Outcome]:
    """Close the gate, start the racers together, wait until every one of them waits on a lock, open the gate; their
    outcomes."""
    with gate(url, gate_sql, params) as holder:
        started = Race(*racers)
        pile_up(url, holder, len(racers))
    return started.join()


def queued_behind_gate(url: str, gate_sql: str, params: Any, *racers: Callable[[], Any]) -> list[Outcome]:
    """Close the gate, start the racers one after another, each once the one before waits at the gate, then open it:
    they meet at the lock in this order (the later ones arrive while the first still holds what it took); their
    outcomes."""
    started = []
    with gate(url, gate_sql, params) as holder:
        for count, racer in enumerate(racers, 1):
            started.append(Race(racer))
            pile_up(url, holder, count, f"racer {count}")
    return [outcome for one in started for outcome in one.join()]
