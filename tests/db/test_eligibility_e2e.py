"""Eligibility end to end: each kind of upload, named by its folder or file-name tags, rendered and run through the
real `micro_batch` job (Stage C's OCR workers, Stage D, Stage E), then judged where an operator sees it: the scan
log, the votes, the review queue and page, `stage-e status` and the Stage D asset's metadata."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from dagster import DagsterEventType, DagsterInstance
from sqlalchemy import text

from stage_e_dagster.db.reporting.status import format_status, pipeline_status
from stage_e_dagster.db.review.page import load_card_view, queue_entries
from stage_e_dagster.db.work import work_rule
from stage_e_dagster.demo.catalog import generate_catalog
from stage_e_dagster.demo.info import layout_of_card
from stage_e_dagster.demo.render import front_name, render_scan
from stage_e_dagster.domain.printed_lines import NUMBERLESS
from stage_e_dagster.job_contracts import BatchSpec
from testkit.corpus import card_ids, ingest, named_scans
from testkit.jobs import micro_batch_job
from testkit.sql import rows

pytestmark = pytest.mark.slow

def _roles(catalogue: list[dict[str, Any]]) -> dict[str, tuple[str, int]]:
    """Each kind's scan: role -> (path under the source's parent, the catalogue printing it shows). Every one
    prints a collector number (machines could vote on each, but for its kind), and the token is a name with more
    than one printing, one of which is made a token printing."""
    numbered = [i for i, card in enumerate(catalogue) if layout_of_card(card) != NUMBERLESS]
    names = Counter(card["name"] for card in catalogue)
    token = [i for i in numbered if names[catalogue[i]["name"]] >= 2][-1]
    plain, back, custom, german = [i for i in numbered if i != token][:4]
    name = front_name(catalogue[token])
    return {
        "plain": (f"scans/{front_name(catalogue[plain])} [{catalogue[plain]['set'].upper()}].png", plain),
        "back": (f"scans/cardbacks/{front_name(catalogue[back])}.png", back),
        "custom": (f"scans/{front_name(catalogue[custom])} [custom art].png", custom),
        "german": (f"scans/german/{front_name(catalogue[german])}.png", german),
        "token": (f"scans/tokens/{name}.png", token),
        "token_as_card": (f"scans/{name} (as a card).png", token),
    }


@pytest.fixture
def uploads(db_url: str, tmp_path: Path) -> dict[str, Any]:
    """Every kind of upload ingested (one more rendered at 560 px on its long side: 161 DPI over the card's 88 mm,
    under the 200 DPI floor), with the token scan's printing made a token printing."""
    roles = _roles(generate_catalog(30, seed=7))
    catalogue = named_scans(db_url, tmp_path, dict(roles.values()), seed=7)
    used = {index for _, index in roles.values()}
    lowest = next(i for i, card in enumerate(catalogue) if i not in used and layout_of_card(card) != NUMBERLESS)
    low = f"scans/{front_name(catalogue[lowest])} [low].png"
    render_scan(catalogue[lowest], long_side=560, seed=5).save(tmp_path / low)
    (token_printing,) = rows(db_url, "UPDATE printing SET layout = 'token' WHERE scryfall_id = %s RETURNING id",
                             (catalogue[roles["token"][1]]["id"],))[0]
    ingest(db_url, tmp_path / "scans", "kinds")
    by_path = {f"scans/{identifier}": card for identifier, card in card_ids(db_url).items()}
    ids = {role: by_path[path] for role, (path, _) in roles.items()}
    ids["low"] = by_path[low]
    return {"ids": ids, "token_printing": token_printing}


def _run(db_url: str, card_ids: list[int]) -> tuple[DagsterInstance, Any]:
    # In-memory Dagster storage: it cannot matter here, the test reads only this run's own events and the app
    # database; no sensor, queue or run failure is involved.
    instance = DagsterInstance.ephemeral()
    result = micro_batch_job(db_url).execute_in_process(run_config=BatchSpec(tuple(card_ids)).run_config(),
                                                       instance=instance)
    assert result.success
    return instance, result


def _stage_d_metadata(instance: DagsterInstance, run_id: str) -> dict[str, Any]:
    events = instance.all_logs(run_id, of_type=DagsterEventType.ASSET_MATERIALIZATION)
    (event,) = [e.asset_materialization for e in events if e.asset_materialization.asset_key.path == ["printing_votes"]]
    return {key: value.value for key, value in event.metadata.items()}


def _log(db_url: str, card: int) -> list[tuple[str, str]]:
    return rows(db_url, "SELECT anonymous_id, skip_reason FROM card_scan_log WHERE card_id = %s ORDER BY id", (card,))


def _machine_votes(db_url: str, card: int) -> list[int | None]:
    return [r[0] for r in rows(db_url, "SELECT printing_id FROM card_printing_tag WHERE card_id = %s "
                                       "AND anonymous_id LIKE 'stage-d-%%'", (card,))]


def test_each_kind_gets_its_eligibility_and_its_reason(db_url, db_engine, uploads):
    ids = uploads["ids"]
    kinds = dict(rows(db_url, "SELECT id, kind || '/' || coalesce(language, '-') || '/' || "
                              "array_to_string(tags, ',') FROM card"))
    assert {role: kinds[card] for role, card in ids.items()} == {
        "plain": "card/-/", "back": "cardback/-/", "custom": "card/-/custom-art", "german": "card/de/",
        "token": "token/-/", "token_as_card": "card/-/", "low": "card/-/"}

    instance, result = _run(db_url, list(ids.values()))

    # The plain card and the token are machine-voted; the token onto its token printing, the same printing's scan
    # filed as a card never onto it.
    assert _machine_votes(db_url, ids["plain"]), _log(db_url, ids["plain"])
    assert uploads["token_printing"] in _machine_votes(db_url, ids["token"]), _log(db_url, ids["token"])
    assert uploads["token_printing"] not in _machine_votes(db_url, ids["token_as_card"])

    # A card back: evidence, its reason in the scan log, no Stage D owed, no vote, not routed to review.
    card_back = ids["back"]
    assert rows(db_url, "SELECT count(*) FROM image_evidence WHERE card_id = %s", (card_back,)) == [(1,)]
    assert ("stage-e-eligibility-v1", "card-back") in _log(db_url, card_back)
    assert rows(db_url, "SELECT card_work_stage(%s)", (card_back,)) == [(None,)]
    assert _machine_votes(db_url, card_back) == []
    assert "to-review" not in {reason for _, reason in _log(db_url, card_back)}

    # Custom art, non-English and low resolution: evidence, no machine vote, routed to review with the reason.
    reasons = {"custom": "custom-art", "german": "non-english", "low": "low-dpi"}
    for path, reason in reasons.items():
        card = ids[path]
        assert _machine_votes(db_url, card) == [], path
        logged = _log(db_url, card)
        assert ("stage-d-join-key-v2", reason) in logged and ("stage-d-slow-path-v1", "to-review") in logged, logged
    with db_engine.connect() as conn:
        for path, reason in reasons.items():
            view = load_card_view(conn, ids[path])
            assert view is not None and view.ineligible == reason and view.awaiting, (path, view)
            assert f"ineligible:{reason}" in view.why
        queued = {e.card_id: e.ineligible for e in queue_entries(conn, limit=50)}
    assert {ids[p]: queued.get(ids[p]) for p in reasons} == {ids[p]: r for p, r in reasons.items()}
    assert queued.get(ids["plain"]) is None and card_back not in queued

    # `stage-e status` and the Stage D asset's metadata count each reason.
    status = pipeline_status(db_engine)
    assert status.ineligible == {"card-back": 1, "custom-art": 1, "non-english": 1, "low-dpi": 1}
    assert "1 custom-art" in format_status(status)
    metadata = _stage_d_metadata(instance, result.run_id)
    assert metadata["ineligible"] == {"card-back": 1, "custom-art": 1, "low-dpi": 1, "non-english": 1}


def test_a_non_english_scan_is_voted_onto_its_english_printing_when_the_setting_allows(db_url, db_engine, uploads,
                                                                                      monkeypatch):
    monkeypatch.setenv("STAGE_E_MATCH_FOREIGN_TO_ENGLISH", "on")
    work_rule.sync(db_engine, work_rule.code_rule(english_match=True))
    german = uploads["ids"]["german"]
    _run(db_url, [german])
    assert _machine_votes(db_url, german), _log(db_url, german)
    assert "non-english" not in {reason for _, reason in _log(db_url, german)}
    with db_engine.connect() as conn:
        assert conn.execute(text("SELECT card_ineligibility(:id)"), {"id": german}).scalar() is None
