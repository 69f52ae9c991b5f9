"""Stage C's fetch phase: a batch's remote cards get their bytes before extraction, through the fleet-wide limiter.

For the remote cards that need extraction:
1. A card with a provisional identity (a manifest's declared sha256) whose copy already has current evidence or a
   pixel skip is served from that copy: no fetch at all.
2. The rest are fetched on at most `concurrency` threads, each request waiting for its turn from the shared pace
   (`remote.limiter`), into this host's fetch cache (`remote.fetch`), hashed as the bytes arrive.
3. Each outcome is recorded as it comes, in a small transaction of its own, and counted (`StageCCounters.fetch`):
   - fetched: the card's hash is verified, and it becomes an extraction task reading the cached file (then the
     copy logic of `stage_c_copies` applies as to any card);
   - throttled: the card is deferred (`THROTTLE_DEFER_SECONDS`), never failed, and the shared pace halves;
   - forbidden: a named skip, or, as one host's 403s in a row reach the limit, a lockout: its trip is recorded,
     the fetching stops and the batch halts (`Lockout` in the counters; the asset raises the envelope failure);
   - gone: a named skip (the next sync marks the card missing);
   - refused: a named skip at once, no request sent (an address the source may not reach, `domain.addresses`);
   - broken: deferred with a growing wait until its `broken_retries`-th time, then a named skip.
4. After extraction `release` removes the cache files of the cards that are settled; a card left owed keeps its
   file, so a killed or deferred batch never fetches a completed version twice.

None of these outcomes is an envelope input except the lockout itself.
"""

from __future__ import annotations

import concurrent.futures as cf
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import Engine, text

from stage_e_dagster.db.intake import fetch_state
from stage_e_dagster.db.judgement.identity_groups import settled
from stage_e_dagster.domain.addresses import redact_url
from stage_e_dagster.domain.remote import (
    BROKEN,
    FORBIDDEN,
    GONE,
    REFUSED,
    THROTTLED,
    Credentials,
    PaceRules,
    fetch_key,
)
from stage_e_dagster.domain.scan_files import MAX_SCAN_BYTES, content_phash
from stage_e_dagster.domain.stage_c import CardWork, StageCCounters
from stage_e_dagster.remote.fetch import STOPPED, FetchCache, FetchJob, FetchResult, fetch_one
from stage_e_dagster.remote.limiter import FleetLimiter
from stage_e_dagster.remote.stores import SourceConfigError, open_source
from stage_e_dagster.stages.stage_c_copies import carry_from_copies
from stage_e_dagster.workers.ocr_worker import Task

THROTTLE_DEFER_SECONDS = 15.0
"""A throttled card is offered again no sooner than this (the shared pace has halved meanwhile)."""
BROKEN_DEFER_SECONDS = 30.0
"""A broken fetch is retried no sooner than this, doubled per earlier attempt."""
POLL_SECONDS = 0.25
CACHE_MAX_AGE_SECONDS = 7 * 24 * 3600.0
"""Cache files older than this (versions that changed or vanished before Stage C took them) are pruned."""


@dataclass(frozen=True)
class FetchSettings:
    """How a process fetches (every field is a `Settings` field, through the `RemoteFetch` resource)."""

    cache_dir: Path
    rate: float = 7.0
    jitter_seconds: float = 0.25
    concurrency: int = 4
    timeout_seconds: float = 60.0
    max_bytes: int = MAX_SCAN_BYTES
    lockout_forbidden: int = 5
    broken_retries: int = 3
    recover_after: int = 20
    fallback_share: float = 0.25

    @classmethod
    def from_settings(cls, conf) -> FetchSettings:
        """The fetch settings `conf` (`settings.Settings`) gives, for a process outside a run (the review page)."""
        return cls(cache_dir=conf.fetch_cache or conf.home / "fetch_cache", rate=conf.fetch_rate,
                   jitter_seconds=conf.fetch_jitter_seconds, concurrency=conf.fetch_concurrency,
                   timeout_seconds=conf.fetch_timeout_seconds, max_bytes=conf.fetch_max_bytes,
                   lockout_forbidden=conf.fetch_lockout_403s, broken_retries=conf.fetch_broken_retries,
                   recover_after=conf.fetch_recover_after, fallback_share=conf.fetch_fallback_share)


@dataclass
class _Outcome:
    """What one fetch thread reports back: outcomes to count, the extraction task, a lockout it judged."""

    counts: Counter[str]
    task: Task | None = None
    lockout: fetch_state.Lockout | None = None


@dataclass
class _Pending:
    work: CardWork
    needed: frozenset[str]
    job: FetchJob


@dataclass
class RemoteFetcher:
    """Fetches a batch's remote cards (see the module docstring); one per batch."""

    engine: Engine
    settings: FetchSettings
    credentials_for: Callable[[str | None], Credentials | None]
    run_id: str | None = None
    limiter: FleetLimiter | None = None
    log: Callable[[str], None] = lambda message: None
    keys: dict[int, str] = field(default_factory=dict)  # card -> fetch key of the version fetched in this batch

    def __post_init__(self) -> None:
        if self.limiter is None:
            rules = PaceRules(recover_after=self.settings.recover_after)
            self.limiter = FleetLimiter(self.engine, self.settings.rate, rules, self.settings.fallback_share,
                                        jitter_seconds=self.settings.jitter_seconds)
        self.cache = FetchCache(self.settings.cache_dir)
        self._stop = threading.Event()

    def fetch(self, cards: Sequence[tuple[CardWork, frozenset[str]]], counters: StageCCounters,
              on_tick: Callable[[list[int]], None] = lambda pids: None) -> list[Task]:
        """Fetch the cards (each with the extractors it needs); the extraction tasks of the fetched ones."""
        provisional = [w.card_id for w, _ in cards if w.content_sha256 and w.remote and not w.remote.verified]
        served = carry_from_copies(self.engine, provisional, self.run_id, counters) if provisional else set()
        counters.fetch["served_by_copy"] += len(served)
        todo = [(w, n) for w, n in cards if w.card_id not in served]
        if not todo:
            return []
        clients = self._clients({w.remote.source_id for w, _ in todo}, counters)
        pending: dict[int, _Pending] = {}
        for work, needed in todo:
            ref = work.remote
            if ref.source_id not in clients:
                continue
            key = fetch_key(ref.source_id, ref.ref, ref.token)
            declared = None if ref.verified else work.content_sha256
            pending[work.card_id] = _Pending(work, needed, FetchJob(work.card_id, ref.source_id, ref.ref, key,
                                                                    declared, ref.listed_size))
            self.keys[work.card_id] = key
        tasks: list[Task] = []
        with cf.ThreadPoolExecutor(max_workers=self.settings.concurrency, thread_name_prefix="fetch") as pool:
            futures = [pool.submit(self._fetch_and_record, p, clients[p.job.source_id]) for p in pending.values()]
            try:
                waiting = set(futures)
                while waiting:
                    done, waiting = cf.wait(waiting, timeout=POLL_SECONDS, return_when=cf.FIRST_COMPLETED)
                    on_tick([])
                    for future in done:
                        outcome = future.result()
                        counters.fetch.update(outcome.counts)
                        if outcome.lockout is not None:
                            lockout = outcome.lockout
                            counters.lockout = {"source": lockout.source_key, "host": lockout.host,
                                                "streak": lockout.streak,
                                                "limit": lockout.limit, "trip_id": lockout.trip_id,
                                                "cards_given_back": len(lockout.cards)}
                            self.log(f"{lockout.describe()}: trip {lockout.trip_id} recorded; fetching stops")
                        if outcome.task is not None:
                            tasks.append(outcome.task)
            except BaseException:
                self._stop.set()
                for future in futures:
                    future.cancel()
                raise
        return tasks

    def _clients(self, source_ids: set[int], counters: StageCCounters) -> dict[int, object]:
        with self.engine.connect() as conn:
            rows = conn.execute(text("SELECT id, key, kind, location, endpoint, region, credentials, allow_private "
                                     "FROM source WHERE id = ANY(CAST(:ids AS integer[]))"),
                                {"ids": sorted(source_ids)}).all()
        clients = {}
        for row in rows:
            try:
                clients[row.id] = open_source(row.kind, row.location, endpoint=row.endpoint, region=row.region,
                                              credentials=row.credentials,
                                              timeout_seconds=self.settings.timeout_seconds,
                                              credentials_for=self.credentials_for, allow_private=row.allow_private)
            except SourceConfigError as err:
                counters.fetch["unconfigured"] += 1
                self.log(f"source {row.key} cannot be fetched from: {err}; its cards wait")
        return clients

    def _fetch_and_record(self, item: _Pending, client) -> _Outcome:
        """On a fetch thread: fetch (nothing once a lockout stopped the batch, not even a request that was waiting
        for its turn), then record the outcome in its own transaction before this thread takes its next card, so a
        lockout stops the thread's next request."""
        job = item.job
        if self._stop.is_set():
            return _Outcome(Counter({"locked_out": 1}))
        result = fetch_one(job, client, self.cache, self.limiter, max_bytes=self.settings.max_bytes,
                           timeout_seconds=self.settings.timeout_seconds, stopped=self._stop.is_set)
        if result.kind == STOPPED:
            return _Outcome(Counter({"locked_out": 1}))
        phash = content_phash(result.path) if result.path is not None else None
        return self._record(item, result, phash)

    def _record(self, item: _Pending, result: FetchResult, phash: int | None) -> _Outcome:
        """Record one outcome (see the module docstring); what to count, and the task of a fetched card."""
        work, job, ref = item.work, item.job, item.work.remote
        counts: Counter[str] = Counter({"requests": result.requests})
        detail = {"status": result.status, "detail": result.detail, "ref": redact_url(job.ref)[:300],
                  "host": result.host}
        host = result.host or f"source:{job.source_id}"
        with self.engine.begin() as conn:
            if result.kind == "fetched":
                counts["cached" if result.cached else "fetched"] += 1
                counts["bytes"] += 0 if result.cached else (result.size or 0)
                fetch_state.source_answered(conn, job.source_id, None if result.cached else host)
                if not fetch_state.record_fetched(conn, work.card_id, ref.token, result.sha256, result.size, phash):
                    counts["superseded"] += 1
                    return _Outcome(counts)
                return _Outcome(counts, Task(work.card_id, str(result.path), result.sha256, item.needed, work.name,
                                             root=str(self.cache.root)))
            counts[result.kind] += 1
            if result.kind == THROTTLED:
                fetch_state.defer(conn, [work.card_id], THROTTLE_DEFER_SECONDS)
            elif result.kind == GONE:
                fetch_state.source_answered(conn, job.source_id, host)
                fetch_state.record_skip(conn, work.card_id, ref.token, job.key, "fetch-gone", detail, self.run_id)
            elif result.kind == REFUSED:
                fetch_state.record_skip(conn, work.card_id, ref.token, job.key, "fetch-refused", detail, self.run_id)
            elif result.kind == FORBIDDEN:
                judged = fetch_state.record_forbidden(conn, job.source_id, work.card_id, ref.token, job.key,
                                                      self.settings.lockout_forbidden, self._trip_run(), detail, host)
                if judged is not None:
                    self._stop.set()
                    counts["locked_out"] += 1
                    return _Outcome(counts, lockout=None if judged == fetch_state.LOCKED else judged)
            elif result.kind == BROKEN:
                attempts, final = fetch_state.record_broken(
                    conn, work.card_id, ref.token, job.key, result.reason or "fetch-error", detail,
                    self.settings.broken_retries, self.run_id)
                if final:
                    counts["broken_final"] += 1
                else:
                    fetch_state.defer(conn, [work.card_id], BROKEN_DEFER_SECONDS * 2 ** max(0, attempts - 1))
        return _Outcome(counts)

    def _trip_run(self) -> str:
        import uuid

        return self.run_id or f"fetch-{uuid.uuid4()}"

    def release(self, card_ids: Sequence[int]) -> int:
        """Remove the cache files of the batch's fetched cards that are settled (evidence or a skip stored); prune
        old cache files. How many files were removed."""
        fetched = [card for card in card_ids if card in self.keys]
        if not fetched:
            return 0
        with self.engine.connect() as conn:
            done = settled(conn, fetched)
        for card in done:
            self.cache.remove(self.keys[card])
        self.cache.prune(CACHE_MAX_AGE_SECONDS)
        return len(done)
