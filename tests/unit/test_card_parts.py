"""A card whose own edge leaves no outline is found round a part of its printing (its text box or art box), proved
by its frame lines: the photo's only card, or a second card beside the found one (a photo of several). A card
guessed round a box whose inside shows the surface is no card, whatever lines its face seems to show. A card run off
the photo is told cut off by a part of it: a box whose card runs off the frame, its edges seen, or a card-like
outline (a holder's) whose face shows no frame lines beside a card's shape cut by the frame.

The photos are the photo benchmark's (`demo.photo`) at a phone's size, where those outlines are lost.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from stage_e_dagster.domain.evidence.card_finder import (
    CARD_CUT_OFF,
    CARD_TOO_SMALL,
    PHOTO,
    SEVERAL_CARDS,
    CardNotFound,
    FoundCard,
    find_card,
)
from stage_e_dagster.domain.evidence.card_outline import outlines, prepare, reduced_copy
from stage_e_dagster.domain.evidence.card_parts import TEXT_BOX, card_by_parts, cards_round, cut_off_round_part
from tests.unit.bench_photo_cases import TOLERANCE, bench_photo, corner_error


def test_the_cards_round_a_text_box_put_it_where_the_layout_does() -> None:
    """A text box seen square on gives two cards: the card's top beyond either long side, the box at its place."""
    box = np.array([[100.0, 200.0], [270.0, 200.0], [270.0, 250.0], [100.0, 250.0]])
    cards = cards_round(box, TEXT_BOX)
    assert len(cards) == 2
    width = 170 / (TEXT_BOX[2] - TEXT_BOX[0])
    height = 50 / (TEXT_BOX[3] - TEXT_BOX[1])
    tops = sorted(float(card[:, 1].min()) for card in cards)
    assert math.isclose(tops[0], 200 - TEXT_BOX[1] * height, abs_tol=0.5)  # the card above the box
    assert math.isclose(tops[1], 200 - (1 - TEXT_BOX[3]) * height, abs_tol=0.5)  # turned: the card below it
    for card in cards:
        assert math.isclose(float(np.ptp(card[:, 0])), width, abs_tol=0.5)


def test_a_card_whose_edge_left_no_outline_is_found_round_its_text_box() -> None:
    """A sleeved card on a playmat whose bright blobs swallow its edge: no card-like outline of it lies on the
    surface, but its text box's outline does, and the card round it shows its frame lines."""
    photo, image = bench_photo(0, 278)
    found = find_card(image)
    assert isinstance(found, FoundCard) and found.kind == PHOTO, found
    assert found.detail.get("part") and corner_error(found, photo, image.size) <= TOLERANCE


@pytest.mark.parametrize("index", [14, 67])
def test_a_card_round_a_box_whose_face_shares_the_surface_s_colours_is_found_by_its_edges(index: int) -> None:
    """Cards whose own edge merged with the surface into no outline: a black border among a playmat's bright blobs
    (#14), a pale border against wood and a dark palm (#67). The card round the art box shows every frame line, and
    its inside shares the surface's colours over a third (#14) or more than half (#67, a red and pink face on
    wood) of it, but its fitted sides lie on strong edges all round, so it is the card."""
    photo, image = bench_photo(5, index)
    found = find_card(image)
    assert isinstance(found, FoundCard) and found.kind == PHOTO, found
    assert found.detail.get("part") and corner_error(found, photo, image.size) <= TOLERANCE


def test_a_card_split_by_a_line_across_it_is_joined_with_its_part_off_the_surface() -> None:
    """A card on wood split by a glare band's edge: its upper part is a card-like outline on the surface, its lower
    part (the art box and below) one ringed by the card, not the surface. Joined, the two make the card, proved by
    its frame lines; the upper part alone is no card."""
    photo, image = bench_photo(3, 49)
    found = find_card(image)
    assert isinstance(found, FoundCard) and found.kind == PHOTO, found
    assert corner_error(found, photo, image.size) <= TOLERANCE


def test_a_second_card_whose_edge_left_no_outline_makes_a_photo_of_several() -> None:
    """Two sleeved cards on a playmat: the second's pale border fades into a pale blob and leaves no outline, but
    its text box does, and the card round it, fitted to its lines, shows them: the photo is of several cards."""
    _, image = bench_photo(0, 2, case="several")
    found = find_card(image)
    assert isinstance(found, CardNotFound) and found.reason == SEVERAL_CARDS, found


def test_a_second_card_turned_beside_the_first_grazing_its_holders_reach_makes_a_photo_of_several() -> None:
    """A silver-bordered card on pale wood beside a red one: its edge leaves no outline the card's shape, but the
    card round its art box shows every line; turned beside the first, its corner crosses the corner of the reach
    a sleeve would take round the first card. A graze is no overlap: the photo is of several cards."""
    _, image = bench_photo(10, 38, "several", photos=0, skips=40)
    found = find_card(image)
    assert isinstance(found, CardNotFound) and found.reason == SEVERAL_CARDS, found


def test_a_small_second_card_whose_outline_is_a_little_off_is_fitted_to_its_lines() -> None:
    """A small card below a large one: its outline is a little off its edges, so its face shows under a whole card's
    share of its frame lines; fitted to them, it shows them all: the photo is of several cards."""
    _, image = bench_photo(10, 39, "several", photos=0, skips=40)
    found = find_card(image)
    assert isinstance(found, CardNotFound) and found.reason == SEVERAL_CARDS, found


def test_a_second_card_outlined_only_to_its_middle_makes_a_photo_of_several() -> None:
    """A small sleeved card upside down on wood above a large one: its outline closes across its middle, half the
    card, whose far end is a little off; the card along it straight on, fitted to its lines, shows them all (its
    warm art shares the wood's colours): the photo is of several cards, not the large one's."""
    _, image = bench_photo(5, 9, "several")
    found = find_card(image)
    assert isinstance(found, CardNotFound) and found.reason == SEVERAL_CARDS, found


def test_a_small_card_seen_closer_is_too_small_not_absent() -> None:
    """A small sleeved card at a playmat's edge: on the whole photo's working copy its outline is lost (no card
    found); looked at closer round a card-shaped outline, it is a whole card, proved by its lines, and too small."""
    _, image = bench_photo(3, 7, case="too-small")
    found = find_card(image)
    assert isinstance(found, CardNotFound) and found.reason == CARD_TOO_SMALL, found
    assert found.detail.get("seen") == "closer"
    assert find_card(image, zoom=False).reason != CARD_TOO_SMALL  # type: ignore[union-attr]


def test_a_card_guessed_round_a_box_whose_inside_is_the_surface_is_no_card() -> None:
    """Cards on wood, their art boxes outlined: a card guessed round one a little off its place (a strip of it on
    the planks) shows 95% of its lines among the planks' grain, but its inside shows the surface: no card is
    answered round a part there, rather than one with its corners off."""
    for index in (116, 120):
        photo, image = bench_photo(0, index)
        small = reduced_copy(image, 640, "RGB")
        prepared = prepare(small, reduced_copy(image, 1280, "L"))
        held = card_by_parts(image, outlines(prepared), prepared, small.shape[1] / image.width)
        if held is not None:
            corners = tuple((float(x) / image.width, float(y) / image.height) for x, y in held[2])
            found = FoundCard(held[0], corners, PHOTO)  # type: ignore[arg-type]
            assert corner_error(found, photo, image.size) <= TOLERANCE, index


def test_a_top_loader_beside_a_card_cut_by_the_frame_is_a_card_cut_off() -> None:
    """A top-loaded card run off the photo's left edge: the top-loader's outline is card-like and whole, but its
    face shows no frame lines; beside it the card's black border leaves a shape cut by the frame with strong
    straight sides. The card is cut off, not absent, told by that shape (not by a box of the card's)."""
    _, image = bench_photo(11, 5, "cut-off", photos=0, skips=40)
    found = find_card(image)
    assert isinstance(found, CardNotFound) and found.reason == CARD_CUT_OFF, found
    assert "part" not in found.detail and "layout" in found.detail


def test_a_card_cut_off_whose_edge_left_no_outline_is_told_by_its_text_box() -> None:
    """A sleeved card on pale wood, upside down, run off the photo's bottom: its edge and the sleeve's leave no
    outline in a card's shape, none reaching the frame with strong sides. Its text box is whole, and of the two
    cards round it only the one running off the frame has its edges where they lie inside the photo: cut off, where
    no card would be found without it."""
    _, image = bench_photo(10, 15, "cut-off", photos=0, skips=40)
    found = find_card(image)
    assert isinstance(found, CardNotFound) and found.reason == CARD_CUT_OFF, found
    assert found.detail.get("part") == "its card runs off the photo"


@pytest.mark.parametrize(("seed", "index"), [(0, 278), (5, 201)])
def test_a_whole_card_s_box_says_nothing_of_a_card_cut_off(seed: int, index: int) -> None:
    """Whole cards whose boxes have a card round them running off the frame, its sides inside the photo on the
    card's own (the two cards round a box overlap): a card found round its text box (seed 0 #278), the card round
    its art box on the box's other side lying whole in the photo with its edges seen; and a sleeved card on a palm
    at the photo's top (seed 5 #201, no card found), glare hiding its edges round its art box, the other card
    round that box leaving the photo by a corner only. No card cut off is told from either."""
    _, image = bench_photo(seed, index)
    small = reduced_copy(image, 640, "RGB")
    prepared = prepare(small, reduced_copy(image, 1280, "L"))
    assert not cut_off_round_part(outlines(prepared), prepared)
