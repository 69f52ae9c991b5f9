"""A card found along the outline chosen for it when that outline spans the card's width but not its length: a line
across the card (a glare band's edge, a plank's dark seam along a dark border) cut it short, or a palm's edge past
the card's end drew it long. The card shares the outline's long sides and one of its ends (`card_parts.cards_along`)
and is proved by its frame lines.

The photos are the photo benchmark's (`demo.photo`) at a phone's size, where those outlines are met.
"""

from __future__ import annotations

import numpy as np

from stage_e_dagster.domain import layout
from stage_e_dagster.domain.evidence.card_finder import PHOTO, FoundCard, find_card
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

