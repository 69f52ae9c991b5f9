"""A held OCR slot whose lock session the server ends (`pg_terminate_backend` from another connection): the holder
hears of it through `acquire(on_lost=...)`, and the slot is free to others at once. A quiet, live session is never
reported lost."""

from __future__ import annotations

import threading
import time

from stage_e_dagster.db.core.advisory_locks import lock_connection_params, open_lock_connection, session_lost
from stage_e_dagster.db.slots.holders import list_slot_holders
from stage_e_dagster.resources.database import AppDatabase
from stage_e_dagster.resources.ocr_slots import LOST_CHECK_SECONDS, OcrSlots
from testkit.sql import scalar


def test_session_lost_is_false_for_a_live_session_and_true_once_the_server_ends_it(db_url):
    conn = open_lock_connection(lock_connection_params(db_url, "stage-e-ocr probe", 5))
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT pg_backend_pid()")
            backend = cur.fetchone()[0]
        assert not session_lost(conn)
        assert scalar(db_url, "SELECT pg_terminate_backend(%s)", (backend,))
        deadline = time.monotonic() + 10
        while not session_lost(conn) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert session_lost(conn)
    finally:
        conn.close()


def test_a_holder_whose_session_is_terminated_is_told_and_the_slot_is_free_to_others(db_url):
    slots = OcrSlots(database=AppDatabase(database_url=db_url), max_slots=1, scope="global")
    lost = threading.Event()
    with slots.acquire(holder="victim", on_lost=lost.set) as held:
        assert held == [0]
        with slots.acquire(holder="rival") as refused:
            assert refused == []
        time.sleep(3 * LOST_CHECK_SECONDS)
        assert not lost.is_set(), "a live session was reported lost"
        (victim,) = [h for h in list_slot_holders(db_url) if "victim" in (h.application_name or "")]
        assert scalar(db_url, "SELECT pg_terminate_backend(%s)", (victim.pid,))
        assert lost.wait(10), "the holder was never told its lock session ended"
        with slots.acquire(holder="rival") as taken:
            assert taken == [0], "the terminated session's slot should be free to others"
