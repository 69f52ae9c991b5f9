"""The envelope on a real Postgres: the cross-process failure-rate query, and the resource (the bars' pure rules:
`tests/unit/test_envelope.py`)."""

from __future__ import annotations

import os
import pickle

import pytest

from stage_e_dagster.db.runs import trips
from stage_e_dagster.db.runs.image_loads import recent_load_counts
from stage_e_dagster.domain.envelope import Breach, Ceilings, LoadCounts, Signals, evaluate_bars
from stage_e_dagster.domain.work import STAGE_C_ID
from stage_e_dagster.resources.database import AppDatabase
from stage_e_dagster.resources.envelope import Envelope, EnvelopeTripped

CEILINGS = Ceilings(host_load=2.0, rss_mb=1024.0, failure_rate=0.01, failure_min_loads=50)


# -- the failure-rate query ----------------------------------------------------------------------------------
def _seed(conn, ok: int, failed: int, failures_first: bool = False, reason: str = "unreadable-image",
          voter: str = STAGE_C_ID, ahead: bool = False) -> None:
    """`ok` evidence rows and `failed` Stage C skip rows; failures are older than every success if asked; every
    row a day ahead of now if asked (later than anything recorded now)."""
    with conn.cursor() as cur:
        cur.execute("INSERT INTO source (key, location) VALUES ('s', '/scans') ON CONFLICT DO NOTHING")
        cur.execute("SELECT coalesce(max(id), 0) FROM card")
        base = cur.fetchone()[0]
        total = ok + failed
        cur.execute(
            "INSERT INTO card (source_id, identifier, name, name_normalised, content_sha256, size_bytes) "
            "SELECT (SELECT id FROM source WHERE key = 's'), 'c' || g, 'n', 'n', md5(g::text) || md5(g::text), 1 "
            "FROM generate_series(%s, %s) g",
            (base + 1, base + total),
        )
        fail_offset = "interval '1 hour'" if failures_first else "interval '0 seconds'"
        at = "now() + interval '1 day'" if ahead else "now()"
        cur.execute(
            "INSERT INTO image_evidence (card_id, content_sha256, updated_at) "
            f"SELECT id, content_sha256, {at} - (id %% 97) * interval '1 second' FROM card "
            "WHERE id > %s AND id <= %s",
            (base, base + ok),
        )
        cur.execute(
            "INSERT INTO card_scan_log (card_id, anonymous_id, skip_reason, created_at) "
            f"SELECT id, %s, %s, {at} - {fail_offset} - (id %% 89) * interval '1 second' FROM card "
            "WHERE id > %s AND id <= %s",
            (voter, reason, base + ok, base + total),
        )


def test_failure_rate_counts_loads_across_the_database(db_engine, pg_connect) -> None:
    conn = pg_connect()
    _seed(conn, ok=98, failed=2)
    with db_engine.connect() as conn:
        counts = recent_load_counts(conn)
    assert counts == LoadCounts(100, 2)
    assert evaluate_bars(Signals(image_loads=counts), CEILINGS).bar == "image_failure_rate"


def test_failure_rate_at_exactly_one_percent_does_not_trip(db_engine, pg_connect) -> None:
    _seed(pg_connect(), ok=99, failed=1)
    with db_engine.connect() as conn:
        counts = recent_load_counts(conn)
    assert counts == LoadCounts(100, 1)
    assert evaluate_bars(Signals(image_loads=counts), CEILINGS) is None


def test_fewer_than_50_loads_are_never_judged(db_engine, pg_connect) -> None:
    _seed(pg_connect(), ok=29, failed=20)
    with db_engine.connect() as conn:
        counts = recent_load_counts(conn)
    assert counts == LoadCounts(49, 20)
    assert evaluate_bars(Signals(image_loads=counts), CEILINGS) is None


def test_only_the_newest_window_counts(db_engine, pg_connect) -> None:
    conn = pg_connect()
    _seed(conn, ok=0, failed=10, failures_first=True)  # an hour old
    _seed(conn, ok=500, failed=0)
    with db_engine.connect() as conn:
        assert recent_load_counts(conn) == LoadCounts(500, 0)
    with db_engine.connect() as conn:
        assert recent_load_counts(conn, window=505) == LoadCounts(505, 5)


def test_other_skips_and_voters_are_not_load_failures(db_engine, pg_connect) -> None:
    conn = pg_connect()
    _seed(conn, ok=60, failed=5, reason="file-missing")
    _seed(conn, ok=0, failed=5, voter="stage-d-join-key-v1")
    _seed(conn, ok=0, failed=3, reason="truncated-image")
    with db_engine.connect() as conn:
        assert recent_load_counts(conn) == LoadCounts(63, 3)


def test_an_acknowledged_failure_rate_trip_leaves_its_failures_unjudged(db_engine, pg_connect) -> None:
    """Acknowledged, the failures behind a failure-rate trip are not judged again (else every passive run would trip
    at its start for good: no new load could dilute them); failures recorded after the acknowledgement are."""
    conn = pg_connect()
    _seed(conn, ok=90, failed=10, failures_first=True)  # an hour old
    with db_engine.connect() as read:
        counts = recent_load_counts(read)
    breach = evaluate_bars(Signals(image_loads=counts), CEILINGS)
    assert breach is not None and breach.bar == "image_failure_rate"
    with db_engine.begin() as write:
        trip = trips.record_trip(write, "run-a", breach.bar, breach.observed, breach.ceiling, breach.detail)
        trips.record_trip(write, "run-b", "host_load", 9.0, 2.0, None)
    with conn.cursor() as cur:  # a host-load trip acknowledged changes nothing here
        cur.execute("UPDATE envelope_trip SET acknowledged_at = now() WHERE run_id = 'run-b'")
    with db_engine.connect() as read:
        assert recent_load_counts(read) == counts
    with db_engine.begin() as write:
        trips.acknowledge(write, trip, "the broken share is fixed")
    with db_engine.connect() as read:
        assert recent_load_counts(read) == LoadCounts(0, 0)
    _seed(conn, ok=45, failed=5, ahead=True)
    with db_engine.connect() as read:
        assert recent_load_counts(read) == LoadCounts(50, 5)


# -- the resource ---------------------------------------------------------------------------------------------
class FakeEnvelope(Envelope):
    """Readers replaced by fixed values; counts how often the host was sampled."""

    def model_post_init(self, context: object) -> None:
        super().model_post_init(context)
        self._test_state = {"samples": 0, "load": 0.5, "rss": 100.0, "loads": LoadCounts(0, 0)}

    def read_host_load(self) -> float | None:
        self._test_state["samples"] += 1
        return self._test_state["load"]

    def read_rss_mb(self, pids):
        return {pid: self._test_state["rss"] for pid in pids}

    def read_image_loads(self) -> LoadCounts | None:
        return self._test_state["loads"]


def _fake(**config) -> FakeEnvelope:
    config.setdefault("database", AppDatabase(database_url="postgresql+psycopg2://nobody@/nowhere"))
    config.setdefault("host_load_ceiling", 4.0)
    return FakeEnvelope(**config)


def test_maybe_check_samples_at_most_once_per_interval() -> None:
    env = _fake(sample_interval_seconds=60)
    assert env.maybe_check("passive", now=1000.0)
    assert not env.maybe_check("passive", now=1030.0)
    assert not env.maybe_check("passive", now=1059.9)
    assert env.maybe_check("passive", now=1060.0)
    env.check("passive", now=1100.0)  # an asset start samples unconditionally and restarts the interval
    assert not env.maybe_check("passive", now=1150.0)
    assert env.maybe_check("passive", now=1161.0)
    assert env._test_state["samples"] == 4


def test_maybe_check_raises_when_it_samples_a_breach() -> None:
    env = _fake()
    assert env.maybe_check("passive", now=0.0)
    env._test_state["load"] = 4.5
    assert not env.maybe_check("passive", now=30.0)  # not due: no sample, no trip
    with pytest.raises(EnvelopeTripped) as tripped:
        env.maybe_check("passive", now=61.0)
    assert tripped.value.breach == Breach("host_load", 4.5, 4.0)


def test_bulk_runs_are_never_sampled() -> None:
    env = _fake()
    env._test_state["load"] = 99.0
    env.check("bulk")
    assert not env.maybe_check("bulk", now=0.0)
    assert env._test_state["samples"] == 0


def test_envelope_tripped_is_a_typed_failure_with_exact_metadata() -> None:
    env = _fake(rss_ceiling_mb=512)
    env._test_state["rss"] = 600.0
    with pytest.raises(EnvelopeTripped) as tripped:
        env.check("passive", worker_pids=[os.getpid()])
    err = tripped.value
    assert set(err.metadata) == {"bar", "observed", "ceiling"}
    assert {k: v.value for k, v in err.metadata.items()} == {"bar": "rss", "observed": 600.0, "ceiling": 512.0}
    assert err.allow_retries is False
    assert "rss observed 600 > ceiling 512" in err.description
    assert pickle.loads(pickle.dumps(err)).breach == err.breach  # survives a worker-process boundary


def test_real_readers_sample_this_host(db_url: str) -> None:
    env = Envelope(database=AppDatabase(database_url=db_url), host_load_ceiling=1e9, rss_ceiling_mb=1.0)
    before = os.getloadavg()[0]
    signals = env.sample(worker_pids=[999_999_999])  # a pid that does not exist is skipped
    after = os.getloadavg()[0]
    # The kernel's 1-minute load average, read between two readings of it (it moves every 5 s).
    assert signals.host_load is not None and min(before, after) <= signals.host_load <= max(before, after)
    assert set(signals.rss_mb) == {os.getpid()} and signals.rss_mb[os.getpid()] > 1.0
    assert signals.image_loads == LoadCounts(0, 0)
    with pytest.raises(EnvelopeTripped) as tripped:
        env.check("passive")
    assert tripped.value.breach.bar == "rss"


def test_unreadable_database_skips_the_failure_rate_bar() -> None:
    unreachable = AppDatabase(database_url="postgresql+psycopg2://nobody:secret@127.0.0.1:1/none")
    env = Envelope(database=unreachable, host_load_ceiling=1e9)
    assert env.read_image_loads() is None
    env.check("passive")  # rss of this test process is far below 1024 MB


def test_default_ceiling_leaves_headroom_above_the_governor_target_and_the_slot_cap() -> None:
    cpus = len(os.sched_getaffinity(0))
    env = Envelope(database=AppDatabase(database_url="x"))
    ceiling, target = env.ceilings().host_load, env.governor(max_workers=1).target
    assert (ceiling, target) == (2.0 * cpus, 1.5 * cpus)
    # The slot cap's workers plus the pipeline's own processes (about 1-1.4 runnable, docs/performance.md) stay
    # under the target, and the target under the ceiling.
    assert ceiling > target >= max(1, cpus - 1) + 1.4 - 1e-9 or cpus == 1
    tuned = Envelope(database=AppDatabase(database_url="x"), host_load_ceiling=9.5, load_target=3.0)
    assert (tuned.ceilings().host_load, tuned.governor(max_workers=4).target) == (9.5, 3.0)
