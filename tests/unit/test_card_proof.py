"""A card the outlines alone do not isolate is found by its own printing (its straightened face shows its frame
lines): one whose surroundings are no surface (a top-loader run off the photo rings it with plastic, and no outline
of the holder closes, or its shadow's edge cut by the frame rings it), one whose outline a line across it split in
two card-like parts, one whose border band grows on to the frame, one whose frame passed for it (read by another
outline over it, or straightened larger); and a card grown round an outline must hold it. A patch of the surface
in a card's shape beside a card proved by its lines is no second card.

The photos are the photo benchmark's (`demo.photo`) at a phone's size, where those outlines are lost.
"""

from __future__ import annotations

import math
import random

from PIL import Image

from stage_e_dagster.demo.catalog import generate_catalog
from stage_e_dagster.demo.photo import DrawnPhoto, PhotoPlan, draw_photo, plan_photo
from stage_e_dagster.demo.render import render_scan
from stage_e_dagster.domain.evidence.card_finder import CARD_TOO_SMALL, PHOTO, CardNotFound, FoundCard, find_card
from stage_e_dagster.domain.evidence.load import load_scan
from tests.unit.bench_photo_cases import bench_photo

TOLERANCE = 0.02


def _photo(seed: int, index: int, bleed: bool | None = None) -> tuple[PhotoPlan, DrawnPhoto, Image.Image]:
    """The photo benchmark's single-card photo `index` of `seed` (its plan, its drawing), decoded as Stage C; the
    card rendered with bleed as the benchmark does unless `bleed` says otherwise."""
    card = random.Random(seed).sample(generate_catalog(400, seed=37), 60)[index % 60]
    plan = plan_photo(100_000 * seed + index, "single")
    bleed = index % 60 % 3 == 0 if bleed is None else bleed
    photo = draw_photo(render_scan(card, long_side=1400, bleed=bleed, seed=seed), plan)
    return plan, photo, load_scan(photo.jpeg()).image  # type: ignore[union-attr]


def _error(found: FoundCard, photo: DrawnPhoto, size: tuple[int, int]) -> float:
    """The farthest corner from the truth, as a share of the photo's diagonal."""
    w, h = size
    return max(math.hypot((f[0] - t[0]) * w, (f[1] - t[1]) * h)
               for f, t in zip(found.corners, photo.corners, strict=True)) / math.hypot(w, h)


def _assert_found(photo: DrawnPhoto, image: Image.Image) -> FoundCard:
    found = find_card(image)
    assert isinstance(found, FoundCard) and found.kind == PHOTO, found
    assert _error(found, photo, image.size) <= TOLERANCE
    return found


def test_a_card_in_a_top_loader_run_off_the_photo_is_found_by_its_frame_lines() -> None:
    """A card in a top-loader run off the photo: no card-like outline lies on the surface, and the card's own
    outline, proved by its frame lines, is the card (not only a card found again round its printed boxes)."""
    plan, photo, image = _photo(0, 153, bleed=False)
    assert plan.holder == "toploader"
    assert not _assert_found(photo, image).detail.get("part")


def test_two_parts_of_one_card_split_by_a_line_across_it_are_one_card() -> None:
    """A sleeved card on a playmat whose outline breaks at the art box's bottom: two card-like parts side by side,
    which together make a card's shape and show its frame lines, are one card, not a photo of two."""
    _assert_found(*_photo(0, 126, bleed=True)[1:])


def test_a_card_whose_frame_passed_for_it_is_found_by_another_outline_over_it() -> None:
    """A black-bordered card in a sleeve on a playmat: its frame inside the border is nested in the card's own
    outline and in truer proportions, so it passes for the card in its sleeve; its face shows too few frame lines,
    and the card's own outline over it, whose face shows them, is the card."""
    _assert_found(*_photo(0, 199, bleed=False)[1:])


def test_a_card_whose_outline_lay_on_its_frame_inside_a_dark_border_is_found_round_it() -> None:
    """A black-bordered card on a black cloth: only its frame inside the border is outlined. Straightened on that
    outline, the frame's own sides lie on the copy's edge, unseen, and the lines cannot be fitted back; straightened
    a little larger, they show, and the fit moves the corners out to the card's edges."""
    plan, photo, image = _photo(0, 30, bleed=True)
    assert plan.background == "cloth"
    found = _assert_found(photo, image)
    assert not found.detail.get("part")  # found round its frame, not only by its printed boxes (`card_parts`)


def test_a_card_grown_round_its_outline_must_hold_it() -> None:
    """A card near the photo's edge on a playmat, outlined with one side slanted: straightened larger, its lines fit
    best shifted along the card (one side moved in past the outline, the other out), which is no card round a
    frame; the photo is skipped, not answered with corners off."""
    _, photo, image = _photo(3, 102)
    found = find_card(image)
    if isinstance(found, FoundCard):
        assert _error(found, photo, image.size) <= TOLERANCE, found


def test_a_band_grown_on_to_the_frame_round_a_card_proved_whole_is_no_cut_off_card() -> None:
    """A card in a top-loader on a cloth: the band round its outline grows on to the photo's frame (the plastic and
    its shadow), which alone would call the card cut off; its own face shows its frame lines inside the photo, so it
    is whole."""
    _assert_found(*_photo(3, 38)[1:])


def test_a_card_inside_a_cut_off_shape_proved_whole_by_its_face_is_the_card() -> None:
    """A card in a top-loader on a pale cloth: the edge of its shadow, cut by the photo's frame, makes a cut-off
    card-like shape round it, so no card-like outline lies on the surface; the card inside that shape whose face
    shows its frame lines (its fitted corners inside the photo) is the card, not a part of a card cut off."""
    _assert_found(*_photo(3, 141)[1:])


def test_a_patch_of_wood_in_a_card_s_shape_beside_a_small_card_is_no_second_card() -> None:
    """A small card on wood and, apart from it, a stretch of plank between two seams in a card's shape, larger than
    the card: the patch's inside is the wood's colours and its face shows no frame lines, while the card's shows
    them. The patch is neither the card nor a second one: the card alone is too small."""
    found = find_card(bench_photo(11, 29, "too-small", photos=0, skips=40)[1])
    assert isinstance(found, CardNotFound) and found.reason == CARD_TOO_SMALL, found
