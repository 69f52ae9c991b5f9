"""The draining run's loop (`control.drain.drain`) on a fake clock: what it claims, when it stops, and when it lets
its OCR workers (and their slots) go. Each test names the promise it holds."""

from __future__ import annotations

from collections import deque

from stage_e_dagster.control.drain import Claim, DrainLimits, drain

LIMITS = DrainLimits(idle_seconds=30.0, max_seconds=600.0, worker_grace_seconds=5.0, watch_seconds=1.0)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


class Workers:
    """Records when workers are kept and released (by the fake clock)."""

    def __init__(self, clock: Clock) -> None:
        self.clock, self.kept, self.events = clock, False, []

    def ensure(self) -> None:
        if not self.kept:
            self.kept = True
            self.events.append(("kept", self.clock.now))

    def release(self) -> None:
        if self.kept:
            self.kept = False
            self.events.append(("released", self.clock.now))


def run(claims, *, statuses=None, halted_at=None, limits=LIMITS, batch_seconds=2.0, watch=lambda: 0):
    """Drain a queue of claims that become available at given times; returns the summary, the runs in order,
    the workers' record and the clock."""
    clock = Clock()
    workers = Workers(clock)
    pending = deque(claims)  # (available at, Claim)
    ran: list[tuple[str, float]] = []

    def claim():
        if pending and pending[0][0] <= clock.now:
            return pending.popleft()[1]
        return None

    def run_claim(batch: Claim) -> str:
        assert workers.kept, "a claim runs with its workers kept"
        ran.append((batch.run_id, clock.now))
        clock.now += batch_seconds
        return (statuses or {}).get(batch.run_id, "completed")

    def halt():
        return "envelope trip open" if halted_at is not None and clock.now >= halted_at else None

    summary = drain(claim=claim, run_claim=run_claim, halt_reason=halt, watch=watch, workers=workers, limits=limits,
                    clock=clock, sleep=clock.sleep)
    return summary, ran, workers, clock


def test_it_takes_each_claim_as_it_comes_and_ends_once_idle():
    summary, ran, _, clock = run([(0, Claim("a", (1, 2))), (3, Claim("b", (3,))), (10, Claim("c", (4,)))])
    assert [run_id for run_id, _ in ran] == ["a", "b", "c"]
    assert summary.cards == 4 and summary.statuses["completed"] == 3
    assert ran[2][1] - 10 < 0.5, "a card owed while it was idle waits at most one short poll"
    assert summary.ended.startswith("idle") and 12 + LIMITS.idle_seconds <= clock.now < 12 + LIMITS.idle_seconds + 2


def test_idle_workers_are_released_after_the_grace_and_kept_again_for_the_next_claim():
    _, _, workers, _ = run([(0, Claim("a", (1,))), (20, Claim("b", (2,)))])
    (kept, t0), (released, t1), (kept_again, t2), (released_last, _) = workers.events
    assert (kept, released, kept_again, released_last) == ("kept", "released", "kept", "released")
    assert t0 == 0 and LIMITS.worker_grace_seconds <= t1 - 2.0 < LIMITS.worker_grace_seconds + 0.5, \
        "released once idle for the grace after the first claim finished"
    assert t2 >= 20


def test_an_open_trip_stops_it_before_the_next_claim():
    summary, ran, workers, _ = run([(0, Claim("a", (1,))), (0, Claim("b", (2,)))], halted_at=1.0)
    assert [run_id for run_id, _ in ran] == ["a"], "the second claim is never taken while the trip is open"
    assert summary.ended.startswith("gate closed") and not workers.kept


def test_a_halted_claim_ends_the_drain():
    summary, ran, _, _ = run([(0, Claim("a", (1,))), (0, Claim("b", (2,)))], statuses={"a": "halted"})
    assert [run_id for run_id, _ in ran] == ["a"] and summary.ended == "run a halted"


def test_the_time_limit_ends_it_between_claims():
    limits = DrainLimits(idle_seconds=30.0, max_seconds=5.0, worker_grace_seconds=5.0, watch_seconds=1.0)
    summary, ran, _, _ = run([(t, Claim(f"c{t}", (t,))) for t in range(10)], limits=limits)
    assert summary.ended.startswith("time limit") and len(ran) == 3, "claims at 0, 2 and 4 s; none at 6 s"


def test_it_watches_the_sources_on_its_own_cadence_while_idle():
    calls: list[int] = []

    def watch() -> int:
        calls.append(1)
        return 3  # files read

    summary, _, _, clock = run([], watch=watch)
    expected = LIMITS.idle_seconds / LIMITS.watch_seconds
    assert expected - 1 <= len(calls) <= expected + 1, "once per watch interval, not once per poll"
    assert summary.synced_files == 3 * len(calls) and clock.now >= LIMITS.idle_seconds
