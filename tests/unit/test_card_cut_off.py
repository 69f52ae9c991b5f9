"""A card cut off by the frame is answered cut off even when what the finder sees whole is only a part of it: its
art box away from the frame's edge, or its frame inside the outline that runs off the photo.

The photos are drawn by hand (a plain surface, flat shapes), so each case shows exactly the part it is about.
"""

from __future__ import annotations

import cv2
import numpy as np
from PIL import Image

from stage_e_dagster.domain.evidence.card_faces import art_box_runs_off
from stage_e_dagster.domain.evidence.card_finder import CARD_CUT_OFF, CARD_TOO_SMALL, CardNotFound, find_card

SIZE = (1200, 900)


def _surface() -> np.ndarray:
    rng = np.random.default_rng(0)
    img = np.full((SIZE[1], SIZE[0], 3), (60, 90, 130), np.float64)
    return np.clip(img + rng.normal(0, 4, img.shape), 0, 255).astype(np.uint8)


def _art_box_photo(centre_y: int) -> Image.Image:
    """Only a card's art box is seen (its border and frame lost on the surface): 330 x 240 px, a card's art box's
    proportions (its long side across the card), centred at `centre_y`."""
    img = _surface()
    w, h = 330, 240
    x0, y0 = SIZE[0] // 2 - w // 2, centre_y - h // 2
    art = np.full((h, w, 3), (230, 180, 70), np.uint8)
    cv2.circle(art, (100, 90), 40, (250, 240, 220), -1)
    img[y0:y0 + h, x0:x0 + w] = art
    return Image.fromarray(img)


def test_an_art_box_whose_card_runs_off_the_photo_is_a_card_cut_off() -> None:
    found = find_card(_art_box_photo(760))  # the card round it reaches past the photo's bottom
    assert isinstance(found, CardNotFound) and found.reason == CARD_CUT_OFF, found


def test_an_art_box_whose_card_lies_whole_in_the_photo_is_not_called_cut_off() -> None:
    found = find_card(_art_box_photo(450))
    assert isinstance(found, CardNotFound) and found.reason == CARD_TOO_SMALL, found


def test_the_card_round_an_art_box_runs_off_only_past_the_frame() -> None:
    art = np.array([[435.0, 330.0], [765.0, 330.0], [765.0, 570.0], [435.0, 570.0]])
    assert not art_box_runs_off(art, SIZE)
    assert art_box_runs_off(art + (0.0, 310.0), SIZE)
    assert art_box_runs_off(art - (0.0, 310.0), SIZE)


def test_a_frame_inside_a_card_run_off_the_photo_outweighs_a_small_whole_shape() -> None:
    """A card pushed off the bottom: its border runs off the photo, its frame inside is card-shaped (though not in
    a card's exact proportions, so no holder's card); a small card-shaped thing lies elsewhere on the surface. The
    photo's card is the one cut off, not two cards."""
    img = _surface()
    cv2.rectangle(img, (600, 380), (1000, 950), (225, 225, 215), -1)
    cv2.rectangle(img, (630, 440), (970, 880), (40, 110, 60), -1)
    cv2.rectangle(img, (150, 150), (250, 290), (200, 60, 60), -1)
    found = find_card(Image.fromarray(img))
    assert isinstance(found, CardNotFound) and found.reason == CARD_CUT_OFF, found
