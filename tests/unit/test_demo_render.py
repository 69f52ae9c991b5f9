"""Scan renderer and set symbols: sizes per bleed class, reprints sharing art, symbol hashes, degradation."""

from __future__ import annotations

import itertools
import random
import time

import imagehash
import pytest

from stage_e_dagster.demo.catalog import generate_catalog
from stage_e_dagster.demo.render import Degradation, collector_lines, legal_text, render_scan, scan_size
from stage_e_dagster.demo.symbols import render_set_symbol
from stage_e_dagster.domain import layout
from stage_e_dagster.domain.bits import hamming as phash_distance
from stage_e_dagster.domain.evidence.hashing import symbol_phash


@pytest.fixture(scope="module")
def catalog() -> list[dict]:
    return generate_catalog(600, seed=11)


@pytest.mark.parametrize(
    ("long_side", "bleed", "size"),
    [(1040, False, (745, 1040)), (1680, False, (1203, 1680)), (1040, True, (764, 1040)), (1680, True, (1235, 1680))],
)
def test_sizes_per_class(catalog: list[dict], long_side: int, bleed: bool, size: tuple[int, int]) -> None:
    assert scan_size(long_side, bleed) == size
    img = render_scan(catalog[0], long_side=long_side, bleed=bleed)
    assert img.mode == "RGB" and img.size == size
    degraded = render_scan(catalog[0], long_side=long_side, bleed=bleed, degradation=Degradation(70, 0.8, 4, 0.9, 1.02))
    assert degraded.size == size


def test_every_border_frame_and_layout_renders(catalog: list[dict]) -> None:
    seen: set[tuple[str, str, str]] = set()
    for card in catalog:
        key = (card["border_color"], card["frame"], card["layout"])
        if key not in seen:
            seen.add(key)
            assert render_scan(card, long_side=520).size == (372, 520)
    assert len(seen) >= 6


def test_render_is_deterministic(catalog: list[dict]) -> None:
    card = catalog[5]
    render_scan(card, long_side=1680, bleed=True)  # warm caches
    started = time.perf_counter()
    a = render_scan(catalog[6], long_side=1680, bleed=True)
    print(f"render: {1000 * (time.perf_counter() - started):.0f} ms")  # a figure, not an assertion
    assert a.tobytes() == render_scan(catalog[6], long_side=1680, bleed=True).tobytes()


def test_reprints_share_the_art(catalog: list[dict]) -> None:
    by_name: dict[str, list[dict]] = {}
    for card in catalog:
        if card["border_color"] != "borderless":
            by_name.setdefault(card["name"], []).append(card)
    first, second = next(v for v in by_name.values() if len(v) >= 2)[:2]
    arts = []
    for card, bleed in ((first, False), (second, True)):
        img = render_scan(card, long_side=1040, bleed=bleed)
        arts.append(imagehash.phash(img.crop(layout.trim_rect(*img.size, bleed).crop_box(layout.ART_CROP))))
    assert arts[0] - arts[1] <= 4


def test_text_helpers(catalog: list[dict]) -> None:
    modern = next(c for c in catalog if c["frame"] == "2015" and c["released_at"] < "2023-04-21")
    line1, line2 = collector_lines(modern)
    assert line1.split("/")[0].lstrip("0") == modern["collector_number"] and line1[-1] in "CURML"
    assert line2 == f"{modern['set'].upper()} • EN ✎ {modern['artist']}"
    old = next(c for c in catalog if c["frame"] == "2003")
    assert collector_lines(old) == ("", None)
    assert old["collector_number"] in legal_text(old)
    assert modern["released_at"][:4] in legal_text(modern)


def test_symbols_distinct_between_sets() -> None:
    codes = sorted({c["set"] for c in generate_catalog(6000, seed=2)})[:30]
    hashes = [symbol_phash(render_set_symbol(code)) for code in codes]
    assert all(h is not None for h in hashes)
    distances = [phash_distance(a, b) for a, b in itertools.combinations(hashes, 2)]  # type: ignore[arg-type]
    assert sum(d > 12 for d in distances) / len(distances) >= 0.97
    assert min(distances) >= 8
    assert render_set_symbol("m20").tobytes() == render_set_symbol("m20").tobytes()
    assert render_set_symbol("m20", size=64).size == (64, 64)


def test_symbol_hash_survives_a_clean_scan(catalog: list[dict]) -> None:
    """Cropped back out of a clean scan, a symbol hashes near its reference and nearest to its own set."""
    rng = random.Random(5)
    references = {code: symbol_phash(render_set_symbol(code)) for code in {c["set"] for c in catalog}}
    distances = []
    for card in rng.sample(catalog, 24):
        for long_side, bleed in ((1040, False), (1680, True)):
            img = render_scan(card, long_side=long_side, bleed=bleed)
            found = symbol_phash(img.crop(layout.trim_rect(*img.size, bleed).crop_box(layout.SYMBOL_CROP)))
            assert found is not None
            by_distance = sorted(references, key=lambda code: phash_distance(found, references[code]))  # type: ignore[arg-type]
            assert by_distance[0] == card["set"]
            distances.append(phash_distance(found, references[card["set"]]))  # type: ignore[arg-type]
    distances.sort()
    assert distances[len(distances) // 2] <= 6
    assert distances[-1] <= 14


def test_reference_symbols_hash_to_stable_signed_64_bit_values() -> None:
    value = symbol_phash(render_set_symbol("otj"))
    assert -(1 << 63) <= value < (1 << 63)
    assert symbol_phash(render_set_symbol("otj")) == value
    assert symbol_phash(render_set_symbol("fdn")) != value


def test_random_degradation_is_mild() -> None:
    rng = random.Random(1)
    for _ in range(200):
        d = Degradation.random(rng)
        assert d.jpeg_quality is None or 60 <= d.jpeg_quality <= 90
        assert 0 <= d.blur_radius <= 1.0 and 0 <= d.noise_sigma <= 6
        assert abs(d.rotation_deg) <= 1.0 and 0.98 <= d.scale <= 1.02
