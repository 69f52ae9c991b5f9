"""A card the outlines alone do not isolate is found by its own printing (its straightened face shows its frame
lines): one whose surroundings are no surface (a top-loader run off the photo rings it with plastic, and no outline
of the holder closes, or its shadow's edge cut by the frame rings it), one whose outline a line across it split in
two card-like parts, one whose border band grows on to the frame, one whose frame passed for it (read by another
outline over it, or straightened larger); and a card grown round an outline must hold it.

The photos are the photo benchmark's (`demo.photo`) at a phone's size, where those outlines are lost.
"""

from __future__ import annotations

import math
import random

from PIL import Image

from stage_e_dagster.demo.catalog import generate_catalog
from stage_e_dagster.demo.photo import DrawnPhoto, draw_photo, plan_photo
from stage_e_dagster.demo.render import render_scan
from stage_e_dagster.domain.evidence.card_finder import PHOTO, FoundCard, find_card
from stage_e_dagster.domain.evidence.load import load_scan

TOLERANCE = 0.02


def test_a_card_in_a_top_loader_run_off_the_photo_is_found_by_its_frame_lines() -> None:
    card = random.Random(0).sample(generate_catalog(400, seed=37), 60)[153 % 60]  # the photo benchmark's card
    plan = plan_photo(153, "single")
    assert plan.holder == "toploader"
    photo = draw_photo(render_scan(card, long_side=1400, bleed=False, seed=0), plan)
    image = load_scan(photo.jpeg()).image  # type: ignore[union-attr]
    found = find_card(image)
    assert isinstance(found, FoundCard) and found.kind == PHOTO, found
    w, h = image.size
    error = max(math.hypot((f[0] - t[0]) * w, (f[1] - t[1]) * h)
                for f, t in zip(found.corners, photo.corners, strict=True)) / math.hypot(w, h)
    assert error <= TOLERANCE


def test_two_parts_of_one_card_split_by_a_line_across_it_are_one_card() -> None:
    """A sleeved card on a playmat whose outline breaks at the art box's bottom: two card-like parts side by side,
    which together make a card's shape and show its frame lines, are one card, not a photo of two."""
    card = random.Random(0).sample(generate_catalog(400, seed=37), 60)[126 % 60]  # the photo benchmark's card
    plan = plan_photo(126, "single")
    photo = draw_photo(render_scan(card, long_side=1400, bleed=True, seed=0), plan)
    image = load_scan(photo.jpeg()).image  # type: ignore[union-attr]
    found = find_card(image)
    assert isinstance(found, FoundCard) and found.kind == PHOTO, found
    w, h = image.size
    error = max(math.hypot((f[0] - t[0]) * w, (f[1] - t[1]) * h)
                for f, t in zip(found.corners, photo.corners, strict=True)) / math.hypot(w, h)
    assert error <= TOLERANCE


def test_a_card_whose_frame_passed_for_it_is_found_by_another_outline_over_it() -> None:
    """A black-bordered card in a sleeve on a playmat: its frame inside the border is nested in the card's own
    outline and in truer proportions, so it passes for the card in its sleeve; its face shows too few frame lines,
    and the card's own outline over it, whose face shows them, is the card."""
    card = random.Random(0).sample(generate_catalog(400, seed=37), 60)[199 % 60]  # the photo benchmark's card
    plan = plan_photo(199, "single")
    photo = draw_photo(render_scan(card, long_side=1400, bleed=False, seed=0), plan)
    image = load_scan(photo.jpeg()).image  # type: ignore[union-attr]
    found = find_card(image)
    assert isinstance(found, FoundCard) and found.kind == PHOTO, found
    w, h = image.size
    error = max(math.hypot((f[0] - t[0]) * w, (f[1] - t[1]) * h)
                for f, t in zip(found.corners, photo.corners, strict=True)) / math.hypot(w, h)
    assert error <= TOLERANCE


def test_a_card_whose_outline_lay_on_its_frame_inside_a_dark_border_is_found_round_it() -> None:
    """A black-bordered card on a black cloth: only its frame inside the border is outlined. Straightened on that
    outline, the frame's own sides lie on the copy's edge, unseen, and the lines cannot be fitted back; straightened
    a little larger, they show, and the fit moves the corners out to the card's edges."""
    card = random.Random(0).sample(generate_catalog(400, seed=37), 60)[30 % 60]  # the photo benchmark's card
    plan = plan_photo(30, "single")
    assert plan.background == "cloth"
    photo = draw_photo(render_scan(card, long_side=1400, bleed=True, seed=0), plan)
    image = load_scan(photo.jpeg()).image  # type: ignore[union-attr]
    found = find_card(image)
    assert isinstance(found, FoundCard) and found.kind == PHOTO, found
    w, h = image.size
    error = max(math.hypot((f[0] - t[0]) * w, (f[1] - t[1]) * h)
                for f, t in zip(found.corners, photo.corners, strict=True)) / math.hypot(w, h)
    assert error <= TOLERANCE


def test_a_card_grown_round_its_outline_must_hold_it() -> None:
    """A card near the photo's edge on a playmat, outlined with one side slanted: straightened larger, its lines fit
    best shifted along the card (one side moved in past the outline, the other out), which is no card round a
    frame; the photo is skipped, not answered with corners off."""
    card = random.Random(3).sample(generate_catalog(400, seed=37), 60)[102 % 60]  # the photo benchmark's card
    plan = plan_photo(300_102, "single")
    photo = draw_photo(render_scan(card, long_side=1400, bleed=True, seed=3), plan)
    image = load_scan(photo.jpeg()).image  # type: ignore[union-attr]
    found = find_card(image)
    if isinstance(found, FoundCard):
        w, h = image.size
        error = max(math.hypot((f[0] - t[0]) * w, (f[1] - t[1]) * h)
                    for f, t in zip(found.corners, photo.corners, strict=True)) / math.hypot(w, h)
        assert error <= TOLERANCE, found


def _seed_3_photo(index: int) -> tuple[DrawnPhoto, Image.Image]:
    """The photo benchmark's single-card photo `index` of seed 3 (its card and its drawing), decoded as Stage C."""
    card = random.Random(3).sample(generate_catalog(400, seed=37), 60)[index % 60]
    photo = draw_photo(render_scan(card, long_side=1400, bleed=index % 60 % 3 == 0, seed=3),
                       plan_photo(300_000 + index, "single"))
    return photo, load_scan(photo.jpeg()).image  # type: ignore[union-attr]


def _error(found: FoundCard, photo: DrawnPhoto, size: tuple[int, int]) -> float:
    w, h = size
    return max(math.hypot((f[0] - t[0]) * w, (f[1] - t[1]) * h)
               for f, t in zip(found.corners, photo.corners, strict=True)) / math.hypot(w, h)


def test_a_band_grown_on_to_the_frame_round_a_card_proved_whole_is_no_cut_off_card() -> None:
    """A card in a top-loader on a cloth: the band round its outline grows on to the photo's frame (the plastic and
    its shadow), which alone would call the card cut off; its own face shows its frame lines inside the photo, so it
    is whole."""
    photo, image = _seed_3_photo(38)
    found = find_card(image)
    assert isinstance(found, FoundCard) and found.kind == PHOTO, found
    assert _error(found, photo, image.size) <= TOLERANCE


def test_a_card_inside_a_cut_off_shape_proved_whole_by_its_face_is_the_card() -> None:
    """A card in a top-loader on a pale cloth: the edge of its shadow, cut by the photo's frame, makes a cut-off
    card-like shape round it, so no card-like outline lies on the surface; the card inside that shape whose face
    shows its frame lines (its fitted corners inside the photo) is the card, not a part of a card cut off."""
    photo, image = _seed_3_photo(141)
    found = find_card(image)
    assert isinstance(found, FoundCard) and found.kind == PHOTO, found
    assert _error(found, photo, image.size) <= TOLERANCE
