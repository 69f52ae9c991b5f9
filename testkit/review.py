"""The review page under test: a small real corpus in Postgres and the app on a live local server.

The corpus is a generated catalogue, real rendered scans in a source directory ingested by `ingest_directory`,
evidence rows from each scan's ground truth (the Stage D seeds' scenarios, instead of slow OCR), and a real Stage D
run over them. The server is uvicorn in a thread on a free loopback port, so requests, cookies and headers are
the real thing.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import uvicorn
from sqlalchemy import select, text, update

from stage_e_dagster.db.catalog.importer import import_catalog
from stage_e_dagster.db.core.engine import get_engine, session_scope
from stage_e_dagster.db.core.models import Card, CardPrintingTag, Expansion
from stage_e_dagster.db.judgement.evidence_store import log_skip
from stage_e_dagster.demo.catalog import generate_catalog, write_catalog
from stage_e_dagster.demo.info import layout_of_card
from stage_e_dagster.demo.render import render_scan
from stage_e_dagster.domain.evidence.model import EvidenceSkip
from stage_e_dagster.domain.printed_lines import NUMBERLESS
from stage_e_dagster.review_web.app import ReviewConfig, build_app
from stage_e_dagster.stages.stage_d import run_stage_d
from testkit.corpus import ingest
from testkit.live import free_port
from testkit.seed import add_evidence_rows, evidence_for, front_name, printing_ids, symbol_hashes

CSRF_FIELD = 'name="csrf" value="'


@dataclass(frozen=True)
class Scan:
    """A seeded card: its id, the printing it truly shows (id and Scryfall id) and the evidence scenario."""

    card_id: int
    truth: int
    truth_scryfall: str
    name: str
    scenario: str


def seed_corpus(url: str, root: Path, scenarios: tuple[str, ...] = ("clean", "no-text", "clean", "no-evidence"),
                seed: int = 3) -> list[Scan]:
    """One real scan per scenario (printings that print a number, names with reprints first, so cards have several
    candidates), ingested, given ground-truth evidence, and run through Stage D."""
    catalog = generate_catalog(40, seed)
    write_catalog(root / "catalog.json", catalog)
    import_catalog(get_engine(url), root / "catalog.json")
    with session_scope(get_engine(url)) as s:  # a reference symbol hash per set, as `catalog import --symbols` stores
        for code in s.scalars(select(Expansion.code).order_by(Expansion.code)).all():
            s.execute(update(Expansion).where(Expansion.code == code).values(
                symbol_phash=random.Random(code).getrandbits(64) - (1 << 63)))
    names = [card["name"] for card in catalog]
    numbered = [card for card in catalog if layout_of_card(card) != NUMBERLESS]  # the join key reads them
    picks = sorted(numbered, key=lambda card: (-names.count(card["name"]), card["id"]))[: len(scenarios)]
    picks.sort(key=front_name)  # files sort as the corpus does, so card ids follow its order
    scans = root / "scans"
    scans.mkdir(parents=True, exist_ok=True)
    for index, card in enumerate(picks):
        render_scan(card, long_side=700).save(scans / f"{front_name(card)} ({index}).png")
    ingest(url, scans, "test")
    ids, symbols, rng = printing_ids(url), symbol_hashes(url), random.Random(seed)
    with session_scope(get_engine(url)) as s:
        by_identifier = dict(s.execute(select(Card.identifier, Card.id)).all())
        shas = dict(s.execute(select(Card.id, Card.content_sha256)).all())
    seeded, evidence = [], {}
    for index, (card, scenario) in enumerate(zip(picks, scenarios, strict=True)):
        card_id = by_identifier[f"{front_name(card)} ({index}).png"]
        fields = evidence_for(card, scenario, symbols, rng)
        if fields is not None:
            evidence[card_id] = fields
        else:  # Stage C could not read it
            with get_engine(url).begin() as conn:
                log_skip(conn, card_id, shas[card_id], EvidenceSkip("unreadable-image"), "seed-run")
        seeded.append(Scan(card_id, ids[card["id"]], card["id"], front_name(card), scenario))
    add_evidence_rows(url, evidence)
    run_stage_d(get_engine(url), [s.card_id for s in seeded], "seed-run")
    return seeded


def human_votes(url: str, card_id: int | None = None) -> list[tuple[int, str, str, int | None, bool]]:
    """Every human vote (card, voter, source, printing, no-match), optionally of one card."""
    with session_scope(get_engine(url)) as s:
        query = select(CardPrintingTag.card_id, CardPrintingTag.anonymous_id, CardPrintingTag.source,
                       CardPrintingTag.printing_id, CardPrintingTag.is_no_match).where(CardPrintingTag.source != "ocr")
        if card_id is not None:
            query = query.where(CardPrintingTag.card_id == card_id)
        return [tuple(row) for row in s.execute(query.order_by(CardPrintingTag.id))]


def card_state(url: str, card_id: int) -> tuple[str, int | None]:
    with get_engine(url).connect() as conn:
        row = conn.execute(text("SELECT printing_status, resolved_printing_id FROM card WHERE id = :id"),
                           {"id": card_id}).one()
    return row.printing_status, row.resolved_printing_id


@contextmanager
def serve(url: str, **options) -> Iterator[str]:
    """The review app for `url` on a live loopback server; yields its base URL."""
    port = free_port()
    config = ReviewConfig(engine=get_engine(url), port=port, **options)
    server = uvicorn.Server(uvicorn.Config(build_app(config), host="127.0.0.1", port=port, log_level="warning",
                                           lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the review server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def csrf_of(html: str) -> str:
    """The CSRF token of the first form on a page."""
    start = html.index(CSRF_FIELD) + len(CSRF_FIELD)
    return html[start:html.index('"', start)]


class Browserless:
    """A cookie-keeping HTTP client for the review page (requests, redirects not followed unless asked)."""

    def __init__(self, base: str) -> None:
        import requests

        self.base = base
        self.http = requests.Session()

    def get(self, path: str, **options):
        return self.http.get(self.base + path, allow_redirects=False, timeout=30, **options)

    def post(self, path: str, data: dict, **options):
        return self.http.post(self.base + path, data=data, allow_redirects=False, timeout=30, **options)

    def signin(self, reviewer: str, **fields):
        page = self.get("/")
        return self.post("/signin", {"csrf": csrf_of(page.text), "reviewer": reviewer, **fields})

    def card_page(self, card_id: int):
        """The card page and its CSRF token and version."""
        page = self.get(f"/card/{card_id}")
        marker = 'name="version" value="'
        start = page.text.index(marker) + len(marker)
        return page, csrf_of(page.text), page.text[start:page.text.index('"', start)]
