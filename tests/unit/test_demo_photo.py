"""Drawn card photos: deterministic from a seed, at phone sizes, and their recorded truth matches what is drawn."""

from __future__ import annotations

import io
from dataclasses import replace
from functools import lru_cache

import cv2
import numpy as np
import pytest
from PIL import Image

from stage_e_dagster.demo.catalog import generate_catalog
from stage_e_dagster.demo.photo import EXPECTED, FOUND, card_face, draw_photo, plan_photo, plan_photos
from stage_e_dagster.demo.render import render_scan
from stage_e_dagster.domain import layout


@lru_cache(maxsize=2)
def _card(bleed: bool = False) -> Image.Image:
    return render_scan(generate_catalog(20, seed=4)[0], long_side=600, bleed=bleed, seed=0)


def _area(corners: tuple, size: tuple[int, int]) -> float:
    pts = np.array(corners, np.float32) * np.array(size, np.float32)
    return abs(cv2.contourArea(pts)) / (size[0] * size[1])


def test_the_same_seed_draws_the_same_photo() -> None:
    plan = plan_photo(7, "single", long_side=800)
    first, second = draw_photo(_card(), plan), draw_photo(_card(), plan)
    assert first.image.tobytes() == second.image.tobytes()
    assert first.corners == second.corners
    other = draw_photo(_card(), plan_photo(8, "single", long_side=800))
    assert other.image.tobytes() != first.image.tobytes()


def test_plans_cover_phone_sizes_every_case_and_every_way_up() -> None:
    plans = plan_photos(120, seed=0, must_skip=5)
    assert len(plans) == 135
    assert {p.expected for p in plans} == set(EXPECTED.values())
    assert all(3000 <= max(p.size) <= 4000 for p in plans)
    singles = [p for p in plans if p.expected == FOUND]
    quarters = {round(p.rotation_deg / 90) % 4 for p in singles}
    assert quarters == {0, 1, 2, 3}
    assert {p.holder for p in singles} == {None, "sleeve", "toploader"}
    assert all(p.tilt_deg <= 15 for p in plans)


def test_a_single_card_is_drawn_where_its_truth_says() -> None:
    plan = replace(plan_photo(3, "single", long_side=800), background="cloth", glare=0.0, light=0.0, blur_px=0,
                   shadow=0.0, holder=None, rotation_deg=30.0)
    photo = draw_photo(_card(), plan)
    assert all(0 <= x <= 1 and 0 <= y <= 1 for x, y in photo.corners)
    assert abs(_area(photo.corners, plan.size) - plan.card_fraction) < 0.02
    # Warping the truth quad back gives the printed card, the right way up.
    w, h = plan.size
    face = card_face(_card())
    quad = np.array(photo.corners, np.float32) * np.array([w, h], np.float32)
    target = np.array([[0, 0], [face.width, 0], [face.width, face.height], [0, face.height]], np.float32)
    back = cv2.warpPerspective(np.asarray(photo.image), cv2.getPerspectiveTransform(quad, target), face.size)
    diff = np.abs(back.astype(np.float32) - np.asarray(face, np.float32))
    turned = np.abs(back.astype(np.float32) - np.asarray(face.rotate(180), np.float32))
    assert float(np.mean(diff)) < 0.5 * float(np.mean(turned))


@pytest.mark.parametrize("case", ["cut-off", "too-small", "several"])
def test_must_skip_photos_are_drawn_as_their_case_says(case: str) -> None:
    plan = plan_photo(5, case, long_side=800)
    photo = draw_photo(_card(), plan, others=(_card(True),))
    assert photo.expected == EXPECTED[case]
    if case == "cut-off":
        assert any(not (0 <= x <= 1 and 0 <= y <= 1) for x, y in photo.corners)
    if case == "too-small":
        assert _area(photo.corners, plan.size) < 0.1
    if case == "several":
        assert len(photo.all_corners) == plan.cards >= 2
        boxes = [(np.min(c, axis=0), np.max(c, axis=0)) for c in map(np.array, photo.all_corners)]
        (alo, ahi), (blo, bhi) = boxes[0], boxes[1]
        assert (alo > bhi).any() or (blo > ahi).any()  # apart, not overlapping


def test_a_card_with_bleed_is_printed_trimmed_and_the_photo_saves_as_jpeg() -> None:
    face = card_face(_card(bleed=True))
    assert abs(face.width / face.height - layout.TRIM_ASPECT) < 0.01
    photo = draw_photo(_card(bleed=True), plan_photo(2, "single", long_side=800))
    decoded = Image.open(io.BytesIO(photo.jpeg()))
    assert decoded.format == "JPEG" and decoded.size == photo.image.size
