"""A card cut off by the frame is answered cut off even when what the finder sees whole is only a part of it: its
art box away from the frame's edge (when the card's edges round it are seen), or its frame inside the outline that
runs off the photo.

The photos are drawn by hand (a plain surface, flat shapes), so each case shows exactly the part it is about.
"""

from __future__ import annotations

import cv2
import numpy as np
from PIL import Image

from stage_e_dagster.domain import layout
from stage_e_dagster.domain.evidence.card_faces import art_box_runs_off
from stage_e_dagster.domain.evidence.card_finder import CARD_CUT_OFF, CARD_TOO_SMALL, CardNotFound, find_card

SIZE = (1200, 900)


def _surface() -> np.ndarray:
    rng = np.random.default_rng(0)
    img = np.full((SIZE[1], SIZE[0], 3), (60, 90, 130), np.float64)
    return np.clip(img + rng.normal(0, 4, img.shape), 0, 255).astype(np.uint8)


def _dashed(img: np.ndarray, a: np.ndarray, b: np.ndarray, on: int = 64, off: int = 16) -> None:
    length = float(np.linalg.norm(b - a))
    u, s = (b - a) / length, 0.0
    while s < length:
        e = min(length, s + on)
        cv2.line(img, tuple(int(v) for v in np.rint(a + u * s)), tuple(int(v) for v in np.rint(a + u * e)),
                 (20, 20, 20), 3)
        s = e + off


def _art_box_photo(centre_y: int, edges: bool = True) -> Image.Image:
    """A card's art box (330 x 240 px, its long side across the card) centred at `centre_y`, seen whole; the card's
    own edges round it (`edges`) only broken, so no outline of the card closes."""
    img = _surface()
    w, h = 330, 240
    x0, y0 = SIZE[0] // 2 - w // 2, centre_y - h // 2
    img[y0:y0 + h, x0:x0 + w] = (230, 180, 70)
    cv2.circle(img, (x0 + 100, y0 + 90), 40, (250, 240, 220), -1)
    if edges:
        box = layout.ART_BOX
        card_w, card_h = w / (box[2] - box[0]), h / (box[3] - box[1])
        left, top = x0 - box[0] * card_w, y0 - box[1] * card_h
        card = np.array([[left, top], [left + card_w, top], [left + card_w, top + card_h], [left, top + card_h]])
        for i in range(4):
            _dashed(img, card[i], card[(i + 1) % 4])
    return Image.fromarray(img)


def test_an_art_box_whose_card_runs_off_the_photo_is_a_card_cut_off() -> None:
    found = find_card(_art_box_photo(600))  # the card round it reaches past the photo's bottom
    assert isinstance(found, CardNotFound) and found.reason == CARD_CUT_OFF, found


def test_a_small_card_near_the_frame_is_not_called_cut_off() -> None:
    """The same shape with no card's edges round it: a small card (or anything) on the surface, too small."""
    found = find_card(_art_box_photo(600, edges=False))
    assert isinstance(found, CardNotFound) and found.reason == CARD_TOO_SMALL, found


def test_an_art_box_whose_card_lies_whole_in_the_photo_is_not_called_cut_off() -> None:
    found = find_card(_art_box_photo(450))
    assert isinstance(found, CardNotFound) and found.reason == CARD_TOO_SMALL, found


def test_the_card_round_an_art_box_runs_off_only_past_the_frame_and_on_edges() -> None:
    art = np.array([[435.0, 330.0], [765.0, 330.0], [765.0, 570.0], [435.0, 570.0]])
    assert not art_box_runs_off(art, SIZE, lambda card: True)
    assert art_box_runs_off(art + (0.0, 310.0), SIZE, lambda card: True)
    assert art_box_runs_off(art - (0.0, 310.0), SIZE, lambda card: True)
    assert not art_box_runs_off(art + (0.0, 310.0), SIZE, lambda card: False)


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
