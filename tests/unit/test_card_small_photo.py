"""A photo smaller than the finder's copies (a site's 1000 px copy of a phone's photo) is searched enlarged to their
size, and its card cut out of the photo itself: the outlines and the texture channel are then read at the sizes the
finder's thresholds were set on, and the reader sees the pixels the photo has, not an enlargement's."""

from __future__ import annotations

import numpy as np
from PIL import Image

from stage_e_dagster.domain.evidence.card_finder import FIND_LONG_SIDE, PHOTO, FoundCard, find_card
from tests.unit.bench_photo_cases import TOLERANCE, bench_photo, corner_error


def _reduced(image: Image.Image, long_side: int) -> Image.Image:
    small = image.copy()
    small.thumbnail((long_side, long_side), Image.Resampling.LANCZOS)
    return small


def test_a_photo_a_thousand_pixels_long_is_found_as_at_a_phones_size() -> None:
    """The photo benchmark's seed 0 photo #9, reduced to 1000 px: searched at its own size, a part of its card is
    taken for a second card (answered "several cards"); enlarged, the card is found, as at the phone's size."""
    photo, image = bench_photo(0, 9)
    small = _reduced(image, 1000)
    assert max(small.size) < FIND_LONG_SIDE
    found = find_card(small)
    assert isinstance(found, FoundCard) and found.kind == PHOTO, found
    assert corner_error(found, photo, small.size) <= TOLERANCE, found.corners


def test_a_small_photos_card_is_cut_from_the_photo_itself() -> None:
    """The card is as tall as the photo shows it, not as the enlarged copy does."""
    photo, image = bench_photo(0, 9)
    small = _reduced(image, 1000)
    found = find_card(small)
    assert isinstance(found, FoundCard)
    quad = np.array(found.corners) * np.array(small.size)
    shown = max(np.linalg.norm(quad[3] - quad[0]), np.linalg.norm(quad[2] - quad[1]))
    assert abs(found.image.height - shown) <= 2
