"""OCR slots against a real Postgres: the cap holds across sessions and OS processes, a killed holder's slot comes
back within a second, the cap fails closed, scopes never collide, and the resource works inside Dagster.

Multi-process tests fork real workers, each with its own lock connection. Hold intervals are stamped with
`time.monotonic()`, which on Linux is the system-wide CLOCK_MONOTONIC (comparable across processes and immune to
wall-clock steps). A worker stamps the start after the lock is granted and the end before it unlocks, so each
stamped interval lies inside the real hold and overlaps can only be under-counted, never invented.
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import os
import signal
import threading
import time
from contextlib import ExitStack

import dagster as dg
import pytest

from stage_e_dagster.db.slots.holders import (
    HOST_SCOPE_FLAG,
    MAX_SLOTS,
    NAMESPACE,
    decode_key2,
    format_slot_holders,
    host_key,
    list_slot_holders,
    slot_key,
)
from stage_e_dagster.resources.database import AppDatabase
from stage_e_dagster.resources.ocr_slots import OcrSlots, usable_cores

CTX = mp.get_context("fork")
WAIT_NEVER_SECONDS = 60
"""A "never" bound for waits measured here: a freed slot not back, or a 0.4 s wait not given up, after this long
on a loaded shared host is a broken promise, not a slow host."""


def global_slots(url: str, max_slots: int, **kw: object) -> OcrSlots:
    return OcrSlots(database=AppDatabase(database_url=url), max_slots=max_slots, scope="global", **kw)


# -- workers (module level so child processes can run them) --------------------------------------------------------
def _hammer(url: str, go: mp.synchronize.Event, end: float, out: mp.Queue) -> None:
    slots = global_slots(url, 2)
    intervals: list[tuple[float, float]] = []
    refused = 0
    go.wait()
    while time.monotonic() < end:
        with slots.acquire() as held:
            if held:
                start = time.monotonic()
                time.sleep(0.02)
                intervals.append((start, time.monotonic()))
            else:
                refused += 1
        time.sleep(0.002)
    out.put((os.getpid(), intervals, refused))


def _hold_forever(url: str, out: mp.Queue) -> None:
    with global_slots(url, 1).acquire(holder="doomed") as held:
        out.put(held)
        time.sleep(120)


def _max_overlap(intervals: list[tuple[float, float]]) -> int:
    """Most intervals open at one instant; at equal stamps an end counts before a start (half-open intervals)."""
    events = sorted([(start, 1) for start, _ in intervals] + [(stop, -1) for _, stop in intervals])
    running = peak = 0
    for _, delta in events:
        running += delta
        peak = max(peak, running)
    return peak


# -- the cap ---------------------------------------------------------------------------------------------------------
def test_cap_of_two_refuses_a_third_session_until_one_releases(db_url: str) -> None:
    """Three acquisitions in one process: Postgres advisory locks are re-entrant within a session, so the third is
    refused only because every acquisition holds its slot on a session of its own."""
    slots = global_slots(db_url, 2)
    with slots.acquire() as first, slots.acquire() as second:
        assert (first, second) == ([0], [1])
        with slots.acquire() as third:
            assert third == []
    with slots.acquire() as first:
        assert first == [0]
        with slots.acquire() as again:
            assert again == [1]


def test_wanted_three_takes_what_is_free(db_url: str) -> None:
    slots = global_slots(db_url, 4)
    with slots.acquire() as elsewhere:
        assert elsewhere == [0]
        with slots.acquire(wanted=3) as held:
            assert held == [1, 2, 3]
            with slots.acquire(wanted=3) as none_left:
                assert none_left == []
    with pytest.raises(ValueError):
        with slots.acquire(wanted=0):
            pass


def test_body_exception_still_releases(db_url: str) -> None:
    slots = global_slots(db_url, 1)
    with pytest.raises(RuntimeError):
        with slots.acquire() as held:
            assert held == [0]
            raise RuntimeError("ocr blew up")
    assert list_slot_holders(db_url) == []
    with slots.acquire() as held:
        assert held == [0]


@pytest.mark.slow
def test_eight_processes_never_exceed_a_cap_of_two(db_url: str) -> None:
    go, out = CTX.Event(), CTX.Queue()
    end = time.monotonic() + 1.0 + 3.0  # 1 s for the forks to start, then 3 s of contention
    workers = [CTX.Process(target=_hammer, args=(db_url, go, end, out)) for _ in range(8)]
    for worker in workers:
        worker.start()
    time.sleep(max(0.0, end - 3.0 - time.monotonic()))
    go.set()
    results = [out.get(timeout=30) for _ in workers]
    for worker in workers:
        worker.join(timeout=10)
        assert worker.exitcode == 0
    intervals = [interval for _, found, _ in results for interval in found]
    refused = sum(count for _, _, count in results)
    assert _max_overlap(intervals) == 2
    assert refused > 0
    assert len({pid for pid, found, _ in results if found}) > 2  # slots really changed hands between processes


@pytest.mark.slow
def test_sigkilled_holder_frees_its_slot(db_url: str) -> None:
    """The slot comes back on its own once the holder dies (the server ends its session). How fast is a figure of
    bench/ocr_slots.py (milliseconds); the bound here only tells "freed" from "never freed" on a loaded host."""
    out = CTX.Queue()
    victim = CTX.Process(target=_hold_forever, args=(db_url, out))
    victim.start()
    try:
        assert out.get(timeout=20) == [0]
        slots = global_slots(db_url, 1)
        with slots.acquire() as held:
            assert held == []
        [holder] = list_slot_holders(db_url)
        assert holder.application_name is not None and f"pid={victim.pid}" in holder.application_name
        os.kill(victim.pid, signal.SIGKILL)
        killed = time.monotonic()
        while True:
            with slots.acquire() as held:
                if held:
                    break
            assert time.monotonic() - killed < WAIT_NEVER_SECONDS, "the killed holder's slot did not come back"
            time.sleep(0.005)
        assert held == [0]
    finally:
        victim.kill()
        victim.join(timeout=10)


# -- failure modes ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "url",
    [
        "postgresql+psycopg2://ocr:s3cr3t-pw@127.0.0.1:1/nowhere",
        "postgresql+psycopg2://ocr:s3cr3t-pw@/nowhere?host=/nonexistent/socket/dir",
        "not a url at all s3cr3t-pw",
    ],
)
def test_unreachable_database_fails_closed_without_leaking_the_password(
    url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="stage_e_dagster")
    with OcrSlots(database=AppDatabase(database_url=url), max_slots=2).acquire() as held:
        assert held == []
    assert "OCR slots unavailable" in caplog.text
    assert "s3cr3t-pw" not in caplog.text


def test_release_of_a_slot_not_held_warns(pg_connect, caplog: pytest.LogCaptureFixture) -> None:
    slots = global_slots("unused", 1)
    held = [0]
    slots.cap._release(pg_connect(), [slots.lock_key(0)], held)
    assert held == []
    assert "was not held at release" in caplog.text


def test_lost_lock_connection_is_logged(db_url: str, pg_connect, caplog: pytest.LogCaptureFixture) -> None:
    slots = global_slots(db_url, 1)
    admin = pg_connect()
    with slots.acquire() as held:
        assert held == [0]
        [holder] = list_slot_holders(db_url)
        with admin.cursor() as cur:
            cur.execute("SELECT pg_terminate_backend(%s)", (holder.pid,))
    assert "lost the OCR slot connection" in caplog.text
    with slots.acquire() as held:
        assert held == [0]


def test_lock_connection_carries_keepalives_and_holder_name(db_url: str) -> None:
    conn = global_slots(db_url, 1).cap._connect("run-1234")
    assert conn is not None
    try:
        params = conn.get_dsn_parameters()
        assert (params["keepalives"], params["keepalives_idle"]) == ("1", "10")
        assert (params["keepalives_interval"], params["keepalives_count"]) == ("5", "3")
        assert "tcp_keepalives_idle=10" in params["options"] and "idle_session_timeout=0" in params["options"]
        assert params["application_name"] == f"stage-e-ocr run-1234 pid={os.getpid()}"
        assert conn.autocommit
    finally:
        conn.close()


# -- scopes, keys and configuration ----------------------------------------------------------------------------------
def test_key_layout_round_trips_and_separates_scopes() -> None:
    host = host_key("machine-a")
    assert slot_key(3, None) == (NAMESPACE, 3)
    assert decode_key2(slot_key(3, None)[1]) == ("global", None, 3)
    assert decode_key2(slot_key(7, host)[1]) == ("host", host, 7)
    assert all(slot_key(s, host)[1] & HOST_SCOPE_FLAG for s in range(MAX_SLOTS))
    assert max(slot_key(MAX_SLOTS - 1, (1 << 22) - 1)) < 2**31
    with pytest.raises(ValueError):
        slot_key(MAX_SLOTS, None)


def test_host_and_global_scopes_never_collide(db_url: str) -> None:
    def stack(slots: OcrSlots) -> list[int]:
        return stack_ctx.enter_context(slots.acquire(wanted=2))

    with ExitStack() as stack_ctx:
        assert stack(global_slots(db_url, 2)) == [0, 1]
        assert stack(OcrSlots(database=AppDatabase(database_url=db_url), max_slots=2, host_id="host-a")) == [0, 1]
        assert stack(OcrSlots(database=AppDatabase(database_url=db_url), max_slots=2, host_id="host-b")) == [0, 1]
        assert stack(global_slots(db_url, 2)) == []
        assert stack(OcrSlots(database=AppDatabase(database_url=db_url), max_slots=2, host_id="host-a")) == []
        scopes = sorted((h.scope, h.host_key, h.slot) for h in list_slot_holders(db_url))
        a, b = host_key("host-a"), host_key("host-b")
        assert scopes == sorted([("global", None, 0), ("global", None, 1), ("host", a, 0), ("host", a, 1),
                                 ("host", b, 0), ("host", b, 1)], key=lambda t: (t[0], t[1] or 0, t[2]))


def test_max_slots_defaults_to_usable_cores_and_clamps(caplog: pytest.LogCaptureFixture) -> None:
    cpus = len(os.sched_getaffinity(0))
    assert usable_cores() == max(1, cpus - 1)
    assert OcrSlots(database=AppDatabase(database_url="unused")).slot_count == usable_cores()
    assert "outside" not in caplog.text
    clamped = OcrSlots(database=AppDatabase(database_url="unused"), max_slots=0)
    assert clamped.slot_count == 1
    assert "max_slots=0 is outside" in caplog.text
    assert OcrSlots(database=AppDatabase(database_url="unused"), max_slots=10_000).slot_count == MAX_SLOTS


def test_wait_acquires_when_a_holder_releases_mid_wait(db_url: str, pg_connect) -> None:
    """The slot is held when the wait starts and freed 0.3 s later, so an acquire that gets it waited at least
    that long (a lower bound the clock cannot break). `wait_seconds` is a "never" bound: an acquire that stopped
    waiting for the release would give up after it, empty-handed."""
    slots = global_slots(db_url, 1, wait_seconds=60.0)
    holder = pg_connect()
    with holder.cursor() as cur:
        cur.execute("SELECT pg_advisory_lock(%s, %s)", slots.lock_key(0))
    started = time.monotonic()
    threading.Timer(0.3, holder.close).start()
    with slots.acquire() as held:
        waited = time.monotonic() - started
        assert held == [0]
    assert waited >= 0.3


def test_wait_gives_up_after_wait_seconds(db_url: str) -> None:
    slots = global_slots(db_url, 1)
    with slots.acquire() as held:
        assert held == [0]
        started = time.monotonic()
        with global_slots(db_url, 1, wait_seconds=0.4).acquire() as none:
            waited = time.monotonic() - started
        assert none == []
        assert 0.4 <= waited < WAIT_NEVER_SECONDS


# -- visibility and Dagster ------------------------------------------------------------------------------------------
def test_list_slot_holders_names_the_holder(db_url: str, pg_connect) -> None:
    other = pg_connect()
    with other.cursor() as cur:  # advisory locks outside our namespace are not OCR slots
        cur.execute("SELECT pg_advisory_lock(1, 2), pg_advisory_lock(12345)")
    slots = OcrSlots(database=AppDatabase(database_url=db_url), max_slots=2, host_id="host-a")
    with slots.acquire(holder="run-abc") as held:
        assert held == [0]
        [holder] = list_slot_holders(db_url)
        assert (holder.slot, holder.scope, holder.host_key) == (0, "host", slots.host_key)
        assert holder.application_name == f"stage-e-ocr run-abc pid={os.getpid()}"
        assert holder.since is not None
        table = format_slot_holders([holder])
        assert "run-abc" in table and "SLOT" in table.splitlines()[0]
    assert list_slot_holders(db_url) == []
    assert format_slot_holders([]) == "no OCR slots held"


@dg.asset
def ocr_probe(context, ocr_slots: OcrSlots) -> list[str]:
    """A throwaway asset: holds a slot under its run id and reports who the database says holds slots.

    `context` stays unannotated: under `from __future__ import annotations` Dagster rejects the string annotation.
    """
    with ocr_slots.acquire(holder=context.run.run_id) as held:
        assert held == [0]
        return [h.application_name or "" for h in list_slot_holders(ocr_slots.database.url)]


def test_resource_inside_dagster(db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STAGE_E_TEST_OCR_URL", db_url)

    slots = OcrSlots(database=AppDatabase(database_url=dg.EnvVar("STAGE_E_TEST_OCR_URL")), max_slots=1, scope="global")
    # In-memory Dagster storage: it cannot matter here, the test reads only this run's own result.
    result = dg.materialize([ocr_probe], resources={"ocr_slots": slots})
    assert result.success
    [name] = result.output_for_node("ocr_probe")
    assert name.startswith(f"stage-e-ocr {result.run_id} pid=")
    assert list_slot_holders(db_url) == []

