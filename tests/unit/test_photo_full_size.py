"""A photo decoded smaller than its file (a phone's JPEG over twice the working size) has its card cut out of a decode
at the file's own size: the finder works at the working size, the collector line needs the pixels."""

from __future__ import annotations

import pytest

from stage_e_dagster.demo.catalog import generate_catalog
from stage_e_dagster.demo.photo import draw_photo, plan_photo
from stage_e_dagster.demo.render import render_scan
from stage_e_dagster.domain.evidence import extract
from stage_e_dagster.domain.evidence.card_finder import FoundCard, find_card
from stage_e_dagster.domain.evidence.load import WORK_LONG_SIDE, load_scan


@pytest.fixture(scope="module")
def photo() -> bytes:
    card = next(c for c in generate_catalog(30, 7) if c["frame"] == "2015")
    drawn = draw_photo(render_scan(card, long_side=900, seed=1), plan_photo(1, "single", long_side=3800), others=())
    return drawn.jpeg()


def test_a_photo_decoded_smaller_than_its_file_is_read_from_a_cut_at_full_size(photo, monkeypatch) -> None:
    loaded = load_scan(photo)
    assert max(loaded.image.size) < 2 * WORK_LONG_SIDE < 3800  # the working decode is the halved one
    found = find_card(loaded.image)
    assert isinstance(found, FoundCard) and found.kind == "photo"
    seen = []
    monkeypatch.setattr(extract, "_extract_card", lambda card, **_: seen.append(card) or extract.Evidence())
    extract.extract_from_loaded(loaded, known_set_codes=(), engine=None, selected={"hashes"}, data=photo)
    (card,) = seen
    assert card.scale == pytest.approx(1.0, abs=0.01)  # a card in the file's own pixels
    assert card.image.height >= 1.8 * found.image.height
    seen.clear()
    extract.extract_from_loaded(loaded, known_set_codes=(), engine=None, selected={"hashes"})  # no bytes: as found
    assert seen[0].image.height == found.image.height
