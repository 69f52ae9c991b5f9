"""The review page shows a photo's card, not the table: its crops and thumbnail are cut out at the corners Stage C
stored (`image_evidence.card_corners`), over real HTTP and a real Postgres."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image

from stage_e_dagster.demo.catalog import generate_catalog
from stage_e_dagster.demo.render import render_scan
from stage_e_dagster.domain import layout
from stage_e_dagster.domain.evidence.model import flat_corners
from stage_e_dagster.review_web import files
from testkit.corpus import card_ids, ingest
from testkit.photos import CARD_LONG_SIDE, photo_file
from testkit.review import Browserless, serve
from testkit.seed import add_evidence


def _likeness(png: bytes, reference: bytes) -> float:
    """Correlation of two images' grey levels, the first resized to the second (1: the same picture)."""
    ref = np.asarray(Image.open(io.BytesIO(reference)).convert("L"), float)
    got = np.asarray(Image.open(io.BytesIO(png)).convert("L").resize((ref.shape[1], ref.shape[0])), float)
    got, ref = got - got.mean(), ref - ref.mean()
    return float((got * ref).sum() / np.sqrt((got * got).sum() * (ref * ref).sum()))


def test_a_photos_crops_and_thumbnail_show_its_card(review_db, tmp_path):
    card = generate_catalog(40, 3)[0]
    seed = 2  # a card on cloth in a sleeve, turned about 150 degrees and tilted (`demo.photo.plan_photo`)
    photo = photo_file(tmp_path / "phone" / "photo.jpg", card, "single", seed)
    ingest(review_db, tmp_path / "phone", "phone")
    card_id = card_ids(review_db)["photo.jpg"]
    add_evidence(review_db, card_id, card_corners=flat_corners(photo.drawn.corners))
    rendered = io.BytesIO()
    render_scan(card, long_side=CARD_LONG_SIDE, seed=seed).save(rendered, "PNG")
    reference = files.crop(rendered.getvalue(), "collector")  # the collector line of the card itself
    with serve(review_db) as base:
        alice = Browserless(base)
        alice.signin("alice")
        crop = alice.get(f"/card/{card_id}/crop/collector.png")
        thumb = alice.get(f"/card/{card_id}/thumb.jpg")
    assert crop.status_code == 200 and thumb.status_code == 200
    # Cut from the table instead, the crop is nothing like the card's line (correlation about 0).
    assert _likeness(crop.content, reference) > 0.7
    width, height = Image.open(io.BytesIO(thumb.content)).size
    assert abs(width / height - layout.TRIM_ASPECT) < 0.01  # the card upright, not the photo (4:3 here)
