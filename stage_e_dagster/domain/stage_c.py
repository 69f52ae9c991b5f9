"""Stage C planning: which extractors each card needs, given what is stored and the current versions."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from stage_e_dagster.domain.evidence.card_finder import SKIP_REASONS
from stage_e_dagster.domain.evidence.extract import EXTRACTOR_VERSIONS
from stage_e_dagster.domain.evidence.model import Evidence

EXTRACTOR_FIELDS: dict[str, tuple[str, ...]] = {
    "geometry": ("width", "height", "aspect_ratio", "bleed_class", "border_color"),
    "collector": ("collector_raw", "collector_number", "set_code_raw", "set_code", "collector_total",
                  "collector_layout", "collector_star", "collector_end_height", "language"),
    "legal": ("legal_raw", "copyright_year", "proxy_marker"),
    "hashes": ("art_phash", "symbol_phash"),
    "quality": ("truncated", "blur_variance", "entropy"),
    "card": ("card_corners",),
}
"""The `image_evidence` columns each extractor writes; carry-forward rewrites only a stale extractor's columns."""

REVIEWED_SKIPS = SKIP_REASONS
"""Stage C skips a person can still act on: a photo in which the card finder could isolate no single whole card
(several cards, a card cut off or too small, none found) still shows a card to a reviewer's eye. Each such skip
routes the card to review with its reason (`db.judgement.evidence_store.route_skips_to_review`); no machine votes
on it. Other skips (an unreadable or missing file) show a person nothing to identify."""
SKIP_ROUTE_LABEL = "card-finder"
"""How a routed skip reads in the review marker's `why` (`card-finder:photo-card-cut-off`), as a calculator's
outcome does (`<calculator>:<outcome>`)."""


@dataclass(frozen=True)
class RemoteRef:
    """Where a remote card's bytes are: its source, the object (`ref`: an S3 key or a manifest entry's URL), the
    version (`token`), whether `content_sha256` was computed from the bytes, and the size its listing said."""

    source_id: int
    ref: str
    token: str
    verified: bool
    listed_size: int | None = None


@dataclass(frozen=True)
class CardWork:
    """One card of a batch as Stage C sees it."""

    card_id: int
    path: str
    content_sha256: str | None  # None: a remote card never fetched, without a provisional identity
    stored_versions: dict[str, str] | None  # versions of the evidence stored for these bytes, if any
    skipped_before: bool  # Stage C already logged a skip for these exact bytes
    missing: bool  # ingest saw the file vanish
    name: str | None = None  # the card's name from its file name: lets the reader confirm one reading
    root: str = ""  # the source directory `path` must stay inside
    remote: RemoteRef | None = None  # a remote card: Stage C fetches its bytes first
    fetch_failed: str | None = None  # this version's fetch failed for good (a named skip)


def extractors_needed(work: CardWork, force: bool) -> frozenset[str] | None:
    """The extractors to run for a card: None when nothing is to be done, else a non-empty set.

    Without `force` this is the work rule's Stage C half (`db/work/rule.sql`) in Python, for one card Stage C holds:
    nothing for a vanished file, nothing when the stored evidence for these bytes covers every current version,
    nothing when Stage C already logged a skip for these bytes or the fetch of a remote card failed for good, else
    the stale extractors (all of them when nothing is stored). `tests/db/test_work_queue.py` checks it against
    `card_work_stage` card by card."""
    if work.missing or work.fetch_failed:
        return None
    if force:
        return frozenset(EXTRACTOR_VERSIONS)
    stored = work.stored_versions or {}
    stale = {name for name, version in EXTRACTOR_VERSIONS.items() if stored.get(name) != version}
    if not stale or work.skipped_before:
        return None
    return frozenset(stale)


def evidence_columns(evidence: Evidence, extractors: frozenset[str] | set[str]) -> dict[str, Any]:
    """The columns computed by `extractors`, ready to write."""
    return {name: getattr(evidence, name) for ext in sorted(extractors) for name in EXTRACTOR_FIELDS[ext]}


@dataclass
class StageCCounters:
    """What Stage C did with a batch; becomes asset metadata and the ledger's `stage_c` counters."""

    cards_in: int = 0
    extracted: int = 0
    carried_forward: int = 0
    current: int = 0
    missing: int = 0
    copies_carried: int = 0  # cards served by a copy's extraction or skip (same bytes): no OCR of their own
    skipped: Counter[str] = field(default_factory=Counter)
    not_processed: int = 0
    slots_held: int = 0
    workers: int = 0  # worker processes started (replacements and governor additions included)
    workers_reused: int = 0  # workers kept from the run's previous batch, already holding their slots
    workers_peak: int = 0  # most workers holding a slot at once
    workers_cap: int = 0  # the most the batch could run (the OCR slot cap)
    governor_steps: list[dict[str, Any]] = field(default_factory=list)
    load_target: float | None = None  # the load governor's target (None: no governor)
    load_peak: float | None = None  # the highest 1-minute load the governor read during the batch
    workers_why: str = ""  # one line: why the batch ran the workers it ran
    elapsed_seconds: float = 0.0
    worker_seconds: float = 0.0  # summed time the OCR workers spent on the batch's cards (read, check, extract)
    throttled: bool = False
    fetch: Counter[str] = field(default_factory=Counter)
    """Remote cards: every fetch outcome (`fetched`, `cached`, `served_by_copy`, `throttled`, `forbidden`, `gone`,
    `broken`, `broken_final`, `locked_out`, `deferred`), the requests made and the bytes received."""
    lockout: dict[str, Any] | None = None  # a source locked us out during the batch (its trip)

    @property
    def cards_per_second(self) -> float:
        done = self.extracted + sum(self.skipped.values())
        return round(done / self.elapsed_seconds, 2) if self.elapsed_seconds > 0 else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "cards_in": self.cards_in,
            "extracted": self.extracted,
            "carried_forward": self.carried_forward,
            "current": self.current,
            "missing": self.missing,
            "copies_carried": self.copies_carried,
            "skipped": dict(sorted(self.skipped.items())),
            "not_processed": self.not_processed,
            "slots_held": self.slots_held,
            "workers": self.workers,
            "workers_reused": self.workers_reused,
            "workers_peak": self.workers_peak,
            "workers_cap": self.workers_cap,
            "governor_steps": list(self.governor_steps),
            "load_target": self.load_target,
            "load_peak": self.load_peak,
            "workers_why": self.workers_why,
            "elapsed_seconds": round(self.elapsed_seconds, 3),
            "worker_seconds": round(self.worker_seconds, 3),
            "cards_per_second": self.cards_per_second,
            "throttled": self.throttled,
            "fetch": dict(sorted(self.fetch.items())),
            "lockout": self.lockout,
        }
