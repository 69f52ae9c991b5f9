"""A photo's card whose collector number did not read has its collector line read again with the light falling on
it divided out (`photo_light.flatten_light`), and only the collector's fields are taken from that read."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from stage_e_dagster.demo.catalog import generate_catalog
from stage_e_dagster.demo.photo import draw_photo, plan_photo
from stage_e_dagster.demo.render import render_scan
from stage_e_dagster.domain.evidence import extract
from stage_e_dagster.domain.evidence.extract import EXTRACTORS, extract_from_loaded
from stage_e_dagster.domain.evidence.load import load_scan
from stage_e_dagster.domain.evidence.model import Evidence


@pytest.fixture(scope="module")
def photo() -> bytes:
    card = next(c for c in generate_catalog(30, 7) if c["frame"] == "2015")
    return draw_photo(render_scan(card, long_side=900, seed=1), plan_photo(2, "single", long_side=2400),
                      others=()).jpeg()


class LightSensitive:
    """Reads a number only off a card whose light was flattened (marked by the patched `flatten_light`)."""

    name = "light-sensitive"

    def read(self, image: Image.Image, psm: int = 6, whitelist: str | None = None) -> str:
        return "171/274 C\nBFZ • EN" if LightSensitive.lit else "~"

    lit = False


def test_a_photo_s_number_is_read_again_with_its_light_flattened(photo: bytes, monkeypatch) -> None:
    """Breakage caught: no second read of the lit card, or its other fields taken too."""
    calls = []

    def flatten(img: Image.Image) -> Image.Image:
        calls.append(img.size)
        LightSensitive.lit = True
        return img

    monkeypatch.setattr(extract, "flatten_light", flatten)
    LightSensitive.lit = False
    loaded = load_scan(photo)
    first = extract_from_loaded(loaded, known_set_codes={"bfz"}, engine=LightSensitive(), selected=EXTRACTORS)
    assert isinstance(first, Evidence) and len(calls) == 1
    assert (first.collector_number, first.set_code) == ("171", "bfz")
    LightSensitive.lit = False
    monkeypatch.setattr(extract, "flatten_light", lambda img: img)  # the light fix reads nothing more
    plain = extract_from_loaded(loaded, known_set_codes={"bfz"}, engine=LightSensitive(), selected=EXTRACTORS)
    assert isinstance(plain, Evidence) and plain.collector_number is None
    assert (first.art_phash, first.legal_raw, first.card_corners) == (plain.art_phash, plain.legal_raw,
                                                                       plain.card_corners)


def test_a_scan_is_not_read_again(monkeypatch) -> None:
    card = next(c for c in generate_catalog(30, 7) if c["frame"] == "2015")
    scan = load_scan(_jpeg(card))
    calls = []
    monkeypatch.setattr(extract, "flatten_light", lambda img: calls.append(1) or img)
    extract_from_loaded(scan, known_set_codes={"bfz"}, engine=LightSensitive(), selected=EXTRACTORS)
    assert calls == []


def _jpeg(card: dict) -> bytes:
    out = io.BytesIO()
    render_scan(card, long_side=900, seed=1).convert("RGB").save(out, "JPEG", quality=90)
    return out.getvalue()
