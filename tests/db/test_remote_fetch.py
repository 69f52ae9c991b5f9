"""Stage C's fetch phase against the loopback manifest server, one failure kind per test, each with its own action:
fetched (verified, cached, never fetched twice), throttled (deferred, never failed, the shared pace halves),
forbidden (a named skip), locked out (a trip naming the source; the acknowledgement resumes), gone (a named skip;
the next sync marks the card missing) and broken (retried a bounded number of times, then a named skip)."""

from __future__ import annotations

import hashlib

import pytest
from sqlalchemy import text

from stage_e_dagster.control.gates import halt_reason
from stage_e_dagster.db.intake.pace import read_pace
from stage_e_dagster.db.judgement import evidence_store
from stage_e_dagster.db.runs import trips
from stage_e_dagster.db.runs.image_loads import recent_load_counts
from stage_e_dagster.domain.evidence.model import EvidenceSkip
from stage_e_dagster.domain.stage_c import StageCCounters
from testkit.remote import add_manifest, card_state, make_fetcher, owed, sync


def _images(count: int, size: int = 4000) -> dict[str, bytes]:
    return {f"card {i}.png": hashlib.sha256(str(i).encode()).digest() * (size // 32) for i in range(count)}


def _fetch(engine, tmp_path, only: list[str] | None = None, **settings) -> tuple[StageCCounters, list]:
    counters = StageCCounters()
    cards = [(w, n) for w, n in owed(engine, "cloud") if only is None or w.name in only or
             any(w.card_id == cid for cid in _ids(engine, only))]
    tasks = make_fetcher(engine, tmp_path / "cache", **settings).fetch(cards, counters)
    return counters, tasks


def _ids(engine, names: list[str] | None) -> list[int]:
    if not names:
        return []
    with engine.connect() as conn:
        return list(conn.execute(text("SELECT id FROM card WHERE identifier = ANY(:n)"), {"n": names}).scalars())


def _source(engine, web, images: dict[str, bytes]) -> None:
    web.images = dict(images)
    add_manifest(engine, "cloud", web)
    assert sync(engine, "cloud").summary.new == len(images)


def _retry_in_future(engine, name: str) -> bool:
    with engine.connect() as conn:
        return bool(conn.execute(text("SELECT w.retry_at > now() FROM card_work w JOIN card c ON c.id = w.card_id "
                                      "WHERE c.identifier = :n"), {"n": name}).scalar())


def _skips(engine) -> list[tuple[str, str]]:
    with engine.connect() as conn:
        return [tuple(r) for r in conn.execute(text(
            "SELECT c.identifier, l.skip_reason FROM card_scan_log l JOIN card c ON c.id = l.card_id ORDER BY 1"))]


def test_fetched_bytes_are_verified_cached_and_never_fetched_twice(db_engine, web, tmp_path):
    images = _images(3)
    _source(db_engine, web, images)
    counters, tasks = _fetch(db_engine, tmp_path)
    assert counters.fetch["fetched"] == 3 and len(tasks) == 3
    state = card_state(db_engine, "cloud")
    for name, data in images.items():
        assert state[name][0] is True and state[name][4] == hashlib.sha256(data).hexdigest()
    assert all(open(task.path, "rb").read() == images[next(n for n in images if hashlib.sha256(images[n])
                                                           .hexdigest() == task.content_sha256)] for task in tasks)
    again, tasks_again = _fetch(db_engine, tmp_path)
    assert again.fetch["cached"] == 3 and again.fetch["fetched"] == 0 and len(tasks_again) == 3
    assert len(web.record.seen) == 3, "a completed fetch is read from the cache, not fetched again"

    fetcher = make_fetcher(db_engine, tmp_path / "cache")
    fetcher.fetch(owed(db_engine, "cloud"), StageCCounters())
    done = tasks[0]
    with db_engine.begin() as conn:
        evidence_store.log_skip(conn, done.card_id, done.content_sha256, EvidenceSkip("too-small", {}), "r")
    assert fetcher.release([t.card_id for t in tasks]) == 1
    remaining = sorted(p.name for p in (tmp_path / "cache").rglob("*") if p.is_file())
    assert len(remaining) == 2, "only the settled card's bytes left the cache"


def test_a_throttled_card_is_deferred_never_failed_and_the_shared_pace_halves_then_recovers(db_engine, web, tmp_path):
    images = _images(6)
    _source(db_engine, web, images)
    web.faults.per_key["card 0.png"] = "429"
    counters, tasks = _fetch(db_engine, tmp_path, only=["card 0.png"])
    assert counters.fetch["throttled"] == 1 and tasks == []
    state = card_state(db_engine, "cloud")["card 0.png"]
    assert state[:3] == (False, None, 0), "deferred: not failed, no broken attempt counted"
    assert _retry_in_future(db_engine, "card 0.png")
    assert _skips(db_engine) == [], "a throttled fetch is no skip"
    with db_engine.connect() as conn:
        assert read_pace(conn).factor == 0.5
        assert recent_load_counts(conn).failures == 0, "never an input of the envelope's image-failure bar"
    web.faults.per_key.clear()
    counters, tasks = _fetch(db_engine, tmp_path, only=[f"card {i}.png" for i in range(1, 5)])
    assert counters.fetch["fetched"] == 4
    with db_engine.connect() as conn:
        assert read_pace(conn).factor == 1.0, "four clean responses (recover_after) doubled the pace back"
    counters, tasks = _fetch(db_engine, tmp_path, only=["card 0.png"])
    assert counters.fetch["fetched"] == 1, "the deferred card is fetched once the store lets it through"


def test_one_forbidden_object_is_a_named_skip_and_no_trip(db_engine, web, tmp_path):
    _source(db_engine, web, _images(3))
    web.faults.per_key["card 1.png"] = "403"
    counters, _ = _fetch(db_engine, tmp_path, concurrency=1)
    assert (counters.fetch["fetched"], counters.fetch["forbidden"], counters.lockout) == (2, 1, None)
    assert card_state(db_engine, "cloud")["card 1.png"][1] == "fetch-forbidden"
    assert _skips(db_engine) == [("card 1.png", "fetch-forbidden")]
    with db_engine.connect() as conn:
        assert trips.open_trips(conn) == []
        assert conn.execute(text("SELECT count(*) FROM card_work w JOIN card c ON c.id = w.card_id "
                                 "WHERE c.identifier = 'card 1.png'")).scalar() == 0, "the work rule owes it nothing"


def test_a_lockout_trips_naming_the_source_and_the_acknowledgement_resumes(db_engine, web, tmp_path):
    _source(db_engine, web, _images(6))
    counters, _ = _fetch(db_engine, tmp_path, only=["card 0.png"])
    assert counters.fetch["fetched"] == 1, "the source answered before"
    web.faults.lockout = True
    counters, tasks = _fetch(db_engine, tmp_path, concurrency=1)
    assert counters.lockout is not None and counters.lockout["source"] == "cloud"
    assert counters.fetch["cached"] == 1 and len(tasks) == 1, "card 0's completed fetch still serves from the cache"
    assert counters.fetch["forbidden"] == 3 and len(web.record.seen) == 1 + 3, "fetching stopped at the lockout"
    assert all(state[1] is None for state in card_state(db_engine, "cloud").values()), \
        "the streak's cards were given back, not skipped"
    with db_engine.connect() as conn:
        (trip,) = trips.open_trips(conn)
    assert (trip.bar, trip.detail["source"], trip.observed, trip.ceiling) == ("fetch_lockout", "cloud", 3.0, 2.0)
    reason = halt_reason(db_engine, True)
    assert reason is not None and "source cloud" in reason, "the stream halts and says which source"
    with db_engine.begin() as conn:
        trips.acknowledge(conn, trip.id, "the store's operator lifted the block")
    assert halt_reason(db_engine, True) is None
    web.faults.lockout = False
    counters, tasks = _fetch(db_engine, tmp_path)
    assert counters.fetch["fetched"] == 5 and len(tasks) == 6


def test_requests_waiting_for_their_turn_when_a_lockout_trips_are_never_sent(db_engine, web, tmp_path):
    _source(db_engine, web, _images(12))
    assert _fetch(db_engine, tmp_path, only=["card 0.png"])[0].fetch["fetched"] == 1, "the source answered before"
    web.faults.lockout = True
    # Four threads at 2 fetches/s: when the third 403 trips the lockout, the other threads hold granted or queued
    # turns about half a second apart; none of them may reach the store.
    counters, _ = _fetch(db_engine, tmp_path, concurrency=4, rate=2.0)
    assert counters.lockout is not None
    forbidden = [seen for seen in web.record.seen if seen.status == 403]
    assert len(forbidden) <= 3 + 1, f"{len(forbidden)} requests after a lockout of 3: queued turns were sent"
    assert counters.fetch["locked_out"] >= 12 - 1 - len(forbidden), "every card not asked for is given back"


def test_a_vanished_object_is_a_named_skip_and_the_next_sync_marks_its_card_missing(db_engine, web, tmp_path):
    _source(db_engine, web, _images(2))
    web.faults.per_key["card 1.png"] = "404"
    counters, _ = _fetch(db_engine, tmp_path)
    assert counters.fetch["gone"] == 1 and card_state(db_engine, "cloud")["card 1.png"][1] == "fetch-gone"
    assert ("card 1.png", "fetch-gone") in _skips(db_engine)
    del web.images["card 1.png"]
    assert sync(db_engine, "cloud").summary.vanished == ["card 1.png"]
    assert card_state(db_engine, "cloud")["card 1.png"][3] is True


@pytest.mark.parametrize(("fault", "reason", "settings"), [
    ("truncate", "fetch-truncated", {}),
    ("slow", "fetch-timeout", {"timeout_seconds": 0.6}),
    ("corrupt", "fetch-corrupt", {}),
    (None, "fetch-too-large", {"max_bytes": 1000}),
])
def test_a_broken_object_is_retried_a_bounded_number_of_times_then_skipped(db_engine, web, tmp_path, fault, reason,
                                                                            settings):
    _source(db_engine, web, _images(1))
    web.faults.slow_seconds = 2.0
    if fault:
        web.faults.per_key["card 0.png"] = fault
    for attempt in (1, 2):
        counters, tasks = _fetch(db_engine, tmp_path, **settings)
        assert counters.fetch["broken"] == 1 and tasks == []
        assert card_state(db_engine, "cloud")["card 0.png"][1:3] == (None, attempt), "deferred, counted"
        assert _retry_in_future(db_engine, "card 0.png"), "the sweep takes it again later"
    counters, _ = _fetch(db_engine, tmp_path, **settings)
    assert counters.fetch["broken_final"] == 1
    assert card_state(db_engine, "cloud")["card 0.png"][1:3] == (reason, 3)
    assert _skips(db_engine) == [("card 0.png", reason)], "one named skip, logged once"
    assert owed(db_engine, "cloud") == [], "the work rule owes it nothing more"
    assert not any(p.is_file() for p in (tmp_path / "cache").rglob("*")), "no broken bytes were kept"

    web.faults.per_key.clear()
    web.images["card 0.png"] = b"\x89PNG new bytes" * 10
    sync(db_engine, "cloud")
    assert card_state(db_engine, "cloud")["card 0.png"][1:3] == (None, 0), "a new version starts afresh"


def test_a_403_judged_while_another_process_records_the_lockout_is_deferred_not_skipped(db_engine, web):
    """Two fetchers (a connection each) get 403s from a host at once. The one that completes the streak records
    the lockout; the other's 403 arrives while that transaction is open. It must wait for it and see the trip (the
    card deferred with the rest), not judge the 403 a single forbidden object: that would end the card's fetching for
    good although the host, not the object, refused."""
    import threading

    from stage_e_dagster.db.intake import fetch_state

    _source(db_engine, web, _images(4))
    host = web.url
    with db_engine.begin() as conn:
        conn.execute(text("INSERT INTO fetch_host (host, fetch_ok_at) VALUES (:h, now())"), {"h": host})  # answered
        source = conn.execute(text("SELECT id FROM source WHERE key = 'cloud'")).scalar()
        cards = conn.execute(text("SELECT id, remote_token, identifier FROM card ORDER BY identifier")).all()

    def judge(conn, card) -> object:
        return fetch_state.record_forbidden(conn, source, card.id, card.remote_token, card.identifier, 3, "run-a", {},
                                            host)

    with db_engine.begin() as conn:
        assert judge(conn, cards[0]) is None and judge(conn, cards[1]) is None
    answers: list = []
    with db_engine.connect() as recording, db_engine.connect() as other:
        recording.begin()
        lockout = judge(recording, cards[2])
        assert isinstance(lockout, fetch_state.Lockout), "the third 403 in a row is the lockout"
        pid = recording.connection.dbapi_connection.info.backend_pid

        def second() -> None:
            with other.begin():
                answers.append(judge(other, cards[3]))

        thread = threading.Thread(target=second)
        thread.start()
        with db_engine.connect() as watch:  # the other fetcher is waiting on the recording transaction
            wait = "SELECT count(*) FROM pg_stat_activity WHERE :pid = ANY(pg_blocking_pids(pid))"
            for _ in range(200):
                if watch.execute(text(wait), {"pid": pid}).scalar():
                    break
                thread.join(0.05)
        recording.commit()
        thread.join(10)
    assert answers == [fetch_state.LOCKED], "the 403 in flight at the lockout is deferred with the rest"
    assert all(state[1] is None for state in card_state(db_engine, "cloud").values()), "no card skipped for good"
    assert "card 3.png" not in dict(_skips(db_engine)), "nor logged as skipped"
