"""A card found along the outline chosen for it when that outline spans the card's width but not its length: a line
across the card (a glare band's edge, a plank's dark seam along a dark border) cut it short, or a palm's edge past
the card's end drew it long. The card shares the outline's long sides and one of its ends (`card_parts.cards_along`)
and is proved by its frame lines. And a part of a card inside a shape run off the photo's frame is a card cut off,
not a small card; a patch of the surface in a card's shape beside a card cut off is no card.

The photos are the photo benchmark's (`demo.photo`) at a phone's size, where those outlines are met.
"""

from __future__ import annotations

import numpy as np

from stage_e_dagster.domain import layout
from stage_e_dagster.domain.evidence.card_finder import CARD_CUT_OFF, PHOTO, CardNotFound, FoundCard, find_card
from stage_e_dagster.domain.evidence.card_parts import cards_along
from tests.unit.bench_photo_cases import TOLERANCE, bench_photo, corner_error


def _found_whole(seed: int, index: int) -> FoundCard:
    photo, image = bench_photo(seed, index)
    found = find_card(image)
    assert isinstance(found, FoundCard) and found.kind == PHOTO, found
    assert corner_error(found, photo, image.size) <= TOLERANCE, found.corners
    return found


def test_a_card_whose_outline_a_glare_band_cut_short_is_found_along_it() -> None:
    """A black-bordered card on dark wood: its border merges with a plank's seam and a glare band crosses it, so
    its outline closes at the band, half the card: 63 x 44 mm, a card's shape turned a quarter. The card along it,
    twice as long, shows its frame lines."""
    assert _found_whole(0, 116).detail.get("part")


def test_a_card_whose_outline_a_palm_drew_long_is_found_along_it() -> None:
    """A sleeved card on a palm: its bottom edge is lost on the palm, whose edge closes the outline past the card's
    end, too long for a card. The card along it, cut to a card's length from its top, shows its frame lines."""
    assert _found_whole(0, 133).detail.get("part")


def test_a_card_along_an_outline_fitted_past_its_edges_is_not_answered() -> None:
    """A sleeved borderless card on a playmat: the outline is its name bar and art, and the card along it shows its
    lines only once the fit scales it a tenth too large, matching other lines to the frame's. Its fitted sides then
    lie off the card's edges, on the playmat: no card is answered rather than a wrong outline."""
    photo, image = bench_photo(3, 229)
    found = find_card(image)
    assert not isinstance(found, FoundCard) or corner_error(found, photo, image.size) <= TOLERANCE, found.corners


def test_the_cards_along_an_outline_share_its_long_sides_and_one_end() -> None:
    """Along a square (seen straight on) the cards run both ways from each side, 1.4 times as long as it is wide.
    Along an outline already a card's shape only the cards across it are (it may be half a card turned a quarter):
    the card along its long sides is the outline itself, already read."""
    square = np.array([[0, 0], [100, 0], [100, 100], [0, 100]], np.float64)
    cards = cards_along(square)
    assert len(cards) == 4
    for card in cards:
        sides = sorted(float(np.linalg.norm(card[(i + 1) % 4] - card[i])) for i in range(4))
        assert np.allclose(sides[:2], 100) and np.allclose(sides[2:], 100 / layout.TRIM_ASPECT)
        assert sum(any(np.allclose(c, s) for s in square) for c in card) == 2  # (one end shared)
    card = np.array([[0, 0], [63, 0], [63, 88], [0, 88]], np.float64)
    across = cards_along(card)
    assert len(across) == 2 and all(np.isclose(np.ptp(c[:, 1]), 88) for c in across)
    assert all(np.isclose(np.ptp(c[:, 0]), 88 / layout.TRIM_ASPECT) for c in across)


def test_an_outline_narrowed_at_its_far_end_gives_the_card_straight_on_too() -> None:
    """Half a card (252 x 176 px of a 252 x 352 card) whose far end a line across it drew a little narrow: its own
    perspective, stretched twofold, narrows and shortens the card; the straight estimate along its sides' mean
    direction lands near the card."""
    card = np.array([[0, 0], [252, 0], [252, 352], [0, 352]], np.float64)
    half = np.array([[0, 0], [252, 0], [244, 176], [8, 176]], np.float64)

    def off(estimate: np.ndarray) -> float:
        return max(min(float(np.linalg.norm(corner - truth)) for truth in card) for corner in estimate)

    errors = sorted(off(estimate) for estimate in cards_along(half))
    assert errors[0] <= 0.06 * 352 and errors[1] >= 2 * errors[0]


def test_a_part_of_a_card_inside_a_shape_run_off_the_frame_is_a_card_cut_off() -> None:
    """A card on pale wood run off the photo's side: its outline is faint, and the part seen whole is half its art
    box (split by a dark streak in the art), far under a readable card's area. Inside the shape the card leaves,
    run off the frame, it is a part of a card cut off, not a small card."""
    found = find_card(bench_photo(3, 10, "cut-off")[1])
    assert isinstance(found, CardNotFound) and found.reason == CARD_CUT_OFF, found


def test_a_part_of_a_card_inside_a_shape_ending_just_short_of_the_frame_is_a_card_cut_off() -> None:
    """A card on red cloth run off the photo's bottom: the part seen whole is half its art box, and the shape round
    the card ends a few pixels short of the frame, so it is not taken as run off the photo. It reaches the frame
    all the same: the card is cut off, not small."""
    found = find_card(bench_photo(0, 7, "cut-off")[1])
    assert isinstance(found, CardNotFound) and found.reason == CARD_CUT_OFF, found


def test_two_parts_of_a_card_cut_off_beside_its_cut_text_box_are_a_card_cut_off() -> None:
    """A card upside down on a palm, cut by the photo's top at its text box: its dark edge leaves no outline, its art
    box, split by glare, leaves two card-like parts side by side, and its text box a shape run off the frame beside
    them. The part taken for the card shows no frame lines and the text box cut off lies within a card's reach of
    both parts: they are parts of the card cut off, not two cards, and their small size says nothing of the
    card's."""
    found = find_card(bench_photo(3, 4, "cut-off")[1])
    assert isinstance(found, CardNotFound) and found.reason == CARD_CUT_OFF, found


def test_a_patch_of_wood_in_a_card_s_shape_beside_a_card_cut_off_is_no_card() -> None:
    """A sleeved card on wood run off the photo: its outline runs off the frame with strong straight sides, and
    the only card-like outline on the surface is a stretch of plank in a card's shape, its inside the wood's colours
    and its face showing few frame lines. Beside a card cut off, the patch is no card: the card is cut off, told by
    its own cut shape (its support), not by the patch chosen and then found beside it (`cut_beside`)."""
    found = find_card(bench_photo(10, 19, "cut-off", photos=0, skips=40)[1])
    assert isinstance(found, CardNotFound) and found.reason == CARD_CUT_OFF, found
    assert "support" in found.detail and "layout" not in found.detail
