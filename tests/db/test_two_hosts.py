"""Two hosts against one Postgres: OCR slot caps per host under `host` scope and one shared cap under `global`,
and `micro_batch` runs from both hosts voting on the same cards without a conflict.

Each simulated host is its own process tree (`testkit/hosts.py`: the host process, its forked slot
holders, and in the run phase the run's OCR workers), configured only through its environment with its own
`STAGE_E_OCR_HOST_ID` and its own `DAGSTER_HOME`, against one application database and one Dagster storage
database on the same server. The oracles are what Postgres shows: the slot holders in `pg_locks`, sampled all
along and never above the cap, and the final rows (evidence, votes, abstentions, ledger, Dagster runs).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

import pytest

from stage_e_dagster.db.slots.holders import host_key, list_slot_holders
from stage_e_dagster.host import usable_cores
from stage_e_dagster.resources.database import AppDatabase
from stage_e_dagster.resources.ocr_slots import OcrSlots
from stage_e_dagster.settings import Settings
from testkit.corpus import demo_corpus
from testkit.instance import dagster_home
from testkit.oracle import duplicate_votes
from testkit.server import scratch_database
from testkit.sql import rows

ROOT = Path(__file__).resolve().parents[2]
CAP = 2  # STAGE_E_OCR_MAX_SLOTS on both hosts
HOLDERS = CAP + 1  # holders each host forks: one more than its cap
HOSTS = ("host-a", "host-b")


class Watch:
    """Samples the OCR slot holders in `pg_locks` until stopped: the most held at once, per host key and in all."""

    def __init__(self, url: str) -> None:
        self.url, self.per_host, self.total, self.samples = url, Counter(), 0, 0
        self.scopes: set[str] = set()
        self.seen: set[tuple[int | None, str]] = set()  # (host key, holder's application_name)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(0.05)

    def sample(self) -> Counter:
        holders = list_slot_holders(self.url)
        now = Counter(h.host_key for h in holders)
        for key, count in now.items():
            self.per_host[key] = max(self.per_host[key], count)
        self.total = max(self.total, len(holders))
        self.scopes.update(h.scope for h in holders)
        self.seen.update((h.host_key, h.application_name or "") for h in holders)
        self.samples += 1
        return now

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)


def start_host(host: str, scope: str, env: dict[str, str], home: Path, batches: list[list[int]]) -> subprocess.Popen:
    dagster_home(home)
    args = [sys.executable, "-m", "testkit.hosts", "--holders", str(HOLDERS)]
    args += [arg for batch in batches for arg in ("--batch", ",".join(map(str, batch)))]
    return subprocess.Popen(
        args, cwd=ROOT, text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True,
        env={**env, "STAGE_E_OCR_HOST_ID": host, "STAGE_E_OCR_SLOT_SCOPE": scope, "DAGSTER_HOME": str(home)},
    )


def read_line(proc: subprocess.Popen, tag: str) -> dict:
    line = proc.stdout.readline()
    assert line.startswith(tag + " "), f"expected `{tag} ...` from a host, got {line!r} (exit {proc.poll()})"
    return json.loads(line[len(tag) + 1:])


def run_hosts(scope: str, env: dict[str, str], tmp: Path, batches: list[list[int]], url: str
              ) -> tuple[Watch, Counter, list[dict], list[dict]]:
    """Start both hosts, wait until every holder took a slot or was refused, sample the holders, release them,
    let the runs finish; the watch, the holders seen at the settled moment, the hosts' reports and runs."""
    procs = [start_host(host, scope, env, tmp / scope / host, batches) for host in HOSTS]
    watch = Watch(url)
    try:
        ready = [read_line(proc, "ready") for proc in procs]
        settled = watch.sample()
        for proc in procs:
            proc.stdin.write("release\n")
            proc.stdin.flush()
        runs = [read_line(proc, "runs") for proc in procs] if batches else []
        for proc in procs:
            assert proc.wait(120) == 0
    finally:
        watch.stop()
        for proc in procs:
            if proc.poll() is None:
                os.killpg(proc.pid, 9)
                proc.wait()
            proc.stdin.close()
            proc.stdout.close()
    return watch, settled, ready, runs


@pytest.fixture
def fleet(db_url: str, pg_server_url: str, dagster_template, tmp_path: Path):
    """The shared environment of both hosts: the app database with demo cards, a Dagster storage database (its
    schema created once, as a deployment does before its hosts start)."""
    demo_corpus(db_url, tmp_path / "demo", cards=6, printings=30)
    cards = [row[0] for row in rows(db_url, "SELECT id FROM card ORDER BY id")]
    with scratch_database(pg_server_url, "dg", template=dagster_template.name) as dagster_url:
        env = {**os.environ, "STAGE_E_DATABASE_URL": db_url, "STAGE_E_DAGSTER_DATABASE_URL": dagster_url,
               "STAGE_E_OCR_MAX_SLOTS": str(CAP), "STAGE_E_OCR_WAIT_SECONDS": "5",
               "STAGE_E_HOST_LOAD_CEILING": "1000"}
        yield env, cards, dagster_url


@pytest.mark.slow
def test_two_hosts_caps_by_scope_and_overlapping_votes(fleet, db_url: str, tmp_path: Path) -> None:
    env, cards, dagster_url = fleet
    keys = {host_key(host) for host in HOSTS}

    # Global scope: one cap for both hosts together.
    watch, settled, ready, _ = run_hosts("global", env, tmp_path, [], db_url)
    assert watch.total == CAP and watch.scopes == {"global"}, (watch.total, watch.scopes)
    assert sum(settled.values()) == CAP and sum(r["held"] for r in ready) == CAP
    assert sum(r["refused"] for r in ready) == 2 * HOLDERS - CAP

    # Host scope: each host its own cap, both full at once; then both hosts run a batch of the same cards.
    batches = [cards]
    watch, settled, ready, runs = run_hosts("host", env, tmp_path, batches, db_url)
    assert settled == Counter({key: CAP for key in keys}), settled
    assert all(r == {"held": CAP, "refused": HOLDERS - CAP} for r in ready), ready
    assert set(watch.per_host) == keys and max(watch.per_host.values()) == CAP, watch.per_host
    assert watch.scopes == {"host"} and watch.total == 2 * CAP

    # The runs' OCR workers took their own host's slots (the scope and host id reach them through the definitions).
    run_host = {run_id: host for host, host_runs in zip(HOSTS, runs, strict=True) for run_id in host_runs}
    ocr = [(key, run_host[run_id]) for key, name in watch.seen for run_id in run_host if run_id in name]
    assert ocr and all(key == host_key(host) for key, host in ocr), ocr

    # The runs: every one completed, and the database holds each card's evidence and each voter's outcome once.
    statuses = {run_id: status for host_runs in runs for run_id, status in host_runs.items()}
    assert len(statuses) == 2 * len(batches) and set(statuses.values()) == {"completed"}, statuses
    assert dict(rows(db_url, "SELECT status, count(*) FROM dispatch_ledger GROUP BY status")) == {
        "completed": 2 * len(batches)}
    assert dict(rows(db_url, "SELECT card_id, count(*) FROM image_evidence GROUP BY card_id")) == {
        card: 1 for card in cards}
    assert rows(db_url, "SELECT count(*) FROM card_printing_tag") != [(0,)]
    assert duplicate_votes(db_url) == [], "one vote per (card, voter), whichever host's run wrote it"
    abstentions = rows(db_url, "SELECT card_id, anonymous_id, skip_reason, count(*) FROM card_scan_log "
                               "GROUP BY 1, 2, 3 HAVING count(*) > 1")
    assert abstentions == []
    decided = {row[0] for row in rows(db_url, "SELECT card_id FROM card_printing_tag UNION "
                                              "SELECT card_id FROM card_scan_log")}
    assert decided == set(cards)
    assert dict(rows(dagster_url, "SELECT status, count(*) FROM runs WHERE pipeline_name = 'micro_batch' "
                                  "GROUP BY status")) == {"SUCCESS": 2 * len(batches)}


def test_the_settings_configure_the_slots_scope_and_host() -> None:
    settings = Settings.from_env({"STAGE_E_OCR_SLOT_SCOPE": "global", "STAGE_E_OCR_HOST_ID": "host-a",
                                  "STAGE_E_OCR_MAX_SLOTS": "64", "STAGE_E_OCR_WAIT_SECONDS": "3"})
    slots = OcrSlots.from_settings(settings, AppDatabase(database_url="postgresql+psycopg2://u@h/db"))
    assert (slots.scope, slots.host_id, slots.max_slots, slots.wait_seconds) == ("global", "host-a", 64, 3.0)
    assert slots.host_key is None and slots.local_workers == min(64, usable_cores())
    hosted = OcrSlots.from_settings(Settings.from_env({"STAGE_E_OCR_HOST_ID": "host-a", "STAGE_E_OCR_MAX_SLOTS": "64"}),
                                    AppDatabase(database_url="postgresql+psycopg2://u@h/db"))
    assert hosted.host_key == host_key("host-a") and hosted.local_workers == 64
