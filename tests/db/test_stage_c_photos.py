"""Phone photos through Stage C into a real Postgres: the card is found, straightened and read, its corners stored
normalised; a photo of two cards and a card cut off by the frame are named skips that end in review with their
reason, and no machine votes on them."""

from __future__ import annotations

import math

import pytest

from stage_e_dagster.db.review.page import load_card_view, queue_entries
from stage_e_dagster.db.review.queue import review_queue
from stage_e_dagster.demo.info import layout_of_card
from stage_e_dagster.domain.printed_lines import NUMBERLESS
from stage_e_dagster.stages.stage_c import run_stage_c
from stage_e_dagster.stages.stage_d import run_stage_d
from stage_e_dagster.workers.ocr_pool import PoolSettings
from testkit.corpus import card_ids, ingest, load_catalogue, write_catalogue
from testkit.photos import photo_file
from testkit.seed import front_name
from testkit.sql import rows

# Photos drawn from these seeds (`demo.photo.plan_photo`, at `testkit.photos.PHOTO_LONG_SIDE`): a single card on
# cloth in a sleeve, turned about 66 degrees, tilted 13 and a thumb over it; two cards apart on cloth; a card on wood
# pushed off the frame, with a glare band.
PHOTOS = {"single": ("single", 2), "several": ("several", 0), "cut-off": ("cut-off", 1)}


@pytest.fixture
def photos(db_url, tmp_path):
    catalogue = write_catalogue(tmp_path, 30, 7)
    load_catalogue(db_url, tmp_path)
    catalogue = [card for card in catalogue if layout_of_card(card) != NUMBERLESS]  # the photo's number is read
    drawn = {}
    for label, (case, seed) in PHOTOS.items():
        card = catalogue[seed % len(catalogue)]
        name = f"{front_name(card)} [{card['set'].upper()}] ({label}).jpg"
        other = catalogue[(seed + 1) % len(catalogue)] if case == "several" else None
        drawn[label] = photo_file(tmp_path / "scans" / name, card, case, seed, other)
    ingest(db_url, tmp_path / "scans", "phone")
    ids = card_ids(db_url)
    return {label: (ids[photo.path.name], photo) for label, photo in drawn.items()}


def test_photos_are_read_or_skipped_with_their_reason_into_review(db_url, db_engine, photos):
    settings = PoolSettings(workers=1, engine="tesserocr", holder="photo-run",
                            slots={"database_url": db_url, "max_slots": 1, "scope": "host"})
    counters = run_stage_c(db_engine, [card_id for card_id, _ in photos.values()], "run-1", settings)
    assert (counters.extracted, dict(counters.skipped)) == (1, {"photo-several-cards": 1, "photo-card-cut-off": 1})

    single_id, single = photos["single"]
    (number, corners), = rows(db_url, f"SELECT collector_number, card_corners FROM image_evidence "
                                      f"WHERE card_id = {single_id}")
    assert number == single.card["collector_number"].lstrip("0")
    truth = [v for corner in single.drawn.corners for v in corner]
    width, height = single.drawn.plan.size
    # Normalised, in reading order: each corner within 2% of the photo's diagonal of where the card was drawn.
    assert len(corners) == 8 and all(0.0 <= v <= 1.0 for v in corners)
    diagonal = math.hypot(width, height)
    assert max(math.hypot((corners[i] - truth[i]) * width, (corners[i + 1] - truth[i + 1]) * height)
               for i in range(0, 8, 2)) <= 0.02 * diagonal, (corners, truth)

    skipped = {photos[label][0]: photos[label][1].expected for label in ("several", "cut-off")}
    assert rows(db_url, "SELECT card_id, skip_reason FROM card_scan_log WHERE anonymous_id = 'stage-c-extract-v1' "
                        "ORDER BY card_id") == sorted(skipped.items())
    # Neither is owed more work: Stage D takes what the work queue owes, the card that was read.
    assert rows(db_url, "SELECT card_id, stage FROM card_work") == [(single_id, "D")]
    run_stage_d(db_engine, [single_id], "run-d")
    assert rows(db_url, "SELECT card_id FROM card_work") == []
    assert rows(db_url, "SELECT DISTINCT card_id FROM card_printing_tag WHERE source = 'ocr'") == [(single_id,)]

    with db_engine.connect() as conn:
        awaiting = {entry.card_id for entry in queue_entries(conn)}
        queued = {item.card_id: item.why for item in review_queue(conn)}
        views = {card_id: load_card_view(conn, card_id) for card_id in skipped}
    assert set(skipped) <= awaiting
    for card_id, reason in skipped.items():
        assert queued[card_id] == [f"card-finder:{reason}"]
        view = views[card_id]
        assert view is not None and view.awaiting and view.routed
        assert view.stage_c_skip == reason and f"card-finder:{reason}" in view.why
        assert view.machine_picks == []
    # A skip and its review marker are written once per bytes: a forced re-extraction adds neither again.
    run_stage_c(db_engine, list(skipped), "run-2", settings, force=True)
    assert rows(db_url, "SELECT anonymous_id, count(*) FROM card_scan_log WHERE card_id <> "
                        f"{single_id} GROUP BY anonymous_id ORDER BY 1") == [
        ("stage-c-extract-v1", 2), ("stage-d-slow-path-v1", 2)]

