"""Stage D on real extraction: ~60 rendered scans (some degraded), ingested, extracted, then run_stage_d."""

from __future__ import annotations

import random
from dataclasses import fields

import pytest
from sqlalchemy import select

from stage_e_dagster.db.core.engine import get_engine, session_scope
from stage_e_dagster.db.core.models import Card, CardPrintingTag, CardScanLog, ImageEvidence, Printing
from stage_e_dagster.demo import render
from stage_e_dagster.demo.info import layout_of_card
from stage_e_dagster.domain.calculators import ERA_ID, FALLBACK_ID, JOIN_KEY_ID
from stage_e_dagster.domain.evidence import extract, ocr
from stage_e_dagster.domain.evidence.model import Evidence
from stage_e_dagster.domain.printed_lines import NUMBERLESS
from stage_e_dagster.stages.stage_d import run_stage_d
from testkit.corpus import ingest, load_catalogue, write_catalogue

pytestmark = pytest.mark.slow
SCANS = 60


@pytest.fixture
def scanned(db_url, tmp_path):
    """Scans of random printings rendered to disk and ingested, with evidence from the real extractor stored."""
    catalogue = write_catalogue(tmp_path, 400, seed=21)
    summary = load_catalogue(db_url, tmp_path)
    rng = random.Random(4)
    scans = tmp_path / "scans"
    scans.mkdir()
    truth: dict[str, str] = {}
    numberless: set[str] = set()  # Scryfall ids of printings that print no number: the era calculator's cards
    for i in range(SCANS):
        card = rng.choice(catalogue)
        degradation = render.Degradation.random(rng) if i % 2 else None
        image = render.render_scan(card, long_side=1040, bleed=i % 3 == 0, seed=i, degradation=degradation)
        identifier = f"{render.front_name(card)} ({i}).png"
        image.save(scans / identifier)
        truth[identifier] = card["id"]
        if layout_of_card(card) == NUMBERLESS:
            numberless.add(card["id"])
    ingest(db_url, scans, "e2e")

    engine = ocr.make_engine()
    known = sorted(summary.set_codes)
    with session_scope(get_engine(db_url)) as s:
        for card in s.scalars(select(Card)):
            found = extract.extract_evidence((scans / card.identifier).read_bytes(), known_set_codes=known,
                                             engine=engine)
            assert isinstance(found, Evidence), found
            values = {f.name: getattr(found, f.name) for f in fields(Evidence) if f.name != "content_sha256"}
            s.add(ImageEvidence(card_id=card.id, content_sha256=card.content_sha256, run_id="e2e", **values))
        return {card.id: truth[card.identifier] for card in s.scalars(select(Card))}, numberless


def test_stage_d_identifies_rendered_scans_from_real_evidence(db_engine, scanned):
    scanned, numberless = scanned
    counters = run_stage_d(db_engine, list(scanned), "run-e2e")
    with session_scope(db_engine) as s:
        votes = s.scalars(select(CardPrintingTag)).all()
        printing_sid = {row.id: row.scryfall_id for row in s.execute(select(Printing.id, Printing.scryfall_id))}
        routed = set(s.scalars(select(CardScanLog.card_id).where(CardScanLog.skip_reason == "to-review")))
    assert counters["cards_processed"] == SCANS and votes
    right = [v for v in votes if v.printing_id is not None and printing_sid[v.printing_id] == scanned[v.card_id]]
    assert len(right) / len(votes) >= 0.98, [(v.card_id, v.anonymous_id, v.printing_id) for v in votes
                                             if v not in right]
    join_key = {v.card_id for v in votes if v.anonymous_id == JOIN_KEY_ID and v.printing_id is not None}
    numbered = [card for card, truth in scanned.items() if truth not in numberless]  # the era calculator's aside
    assert len(join_key & set(numbered)) / len(numbered) >= 0.85
    print(f"e2e: {len(votes)} votes, {len(right)} right, join-key votes on {len(join_key)}/{SCANS} cards, "
          f"{len(routed)} routed; skips {counters['skips']}")
    confident = {v.card_id for v in votes if v.printing_id is not None and (
        (v.anonymous_id == JOIN_KEY_ID and v.confidence >= 0.8) or v.anonymous_id in (ERA_ID, FALLBACK_ID))}
    assert confident | routed == set(scanned) and not confident & routed
