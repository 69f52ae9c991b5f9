"""Settling an outline on the card's own edges: perspective-aware proportions, a frame grown out to a faint card
edge (seen in texture only), a card kept inside its sleeve, and a palm under a card near the frame told from a
border run off the photo.

The images are drawn here with numpy at the finder's working size, so each test costs a few milliseconds.
"""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from stage_e_dagster.domain import layout
from stage_e_dagster.domain.evidence.card_border import grow
from stage_e_dagster.domain.evidence.card_outline import prepare
from stage_e_dagster.domain.evidence.card_settle import Directional, settle, true_aspect


def _tilted(aspect: float, tilt_deg: float, axis_deg: float, long_side: float = 300.0) -> np.ndarray:
    """A rectangle of `aspect` (short over long, portrait) tilted in depth about an axis in its plane and seen
    by a pinhole camera two long sides away, clockwise on screen, centred at (320, 240)."""
    w, h = aspect * long_side, long_side
    pts = np.array([[-w / 2, -h / 2, 0], [w / 2, -h / 2, 0], [w / 2, h / 2, 0], [-w / 2, h / 2, 0]], np.float64)
    axis = np.array([math.cos(math.radians(axis_deg)), math.sin(math.radians(axis_deg)), 0.0])
    turn, _ = cv2.Rodrigues(axis * math.radians(tilt_deg))
    pts = pts @ turn.T
    distance = 2.0 * long_side
    z = pts[:, 2] + distance
    return np.stack([pts[:, 0] * distance / z, pts[:, 1] * distance / z], axis=1) + (320.0, 240.0)


def _simple(quad: np.ndarray) -> float:
    s = [float(np.linalg.norm(quad[(i + 1) % 4] - quad[i])) for i in range(4)]
    a, b = (s[0] + s[2]) / 2, (s[1] + s[3]) / 2
    return min(a, b) / max(a, b)


@pytest.mark.parametrize(("tilt", "axis"), [(15.0, 0.0), (15.0, 90.0), (12.0, 40.0)])
def test_true_aspect_undoes_a_tilt(tilt: float, axis: float) -> None:
    card = _tilted(layout.TRIM_ASPECT, tilt, axis)
    frame = _tilted(0.767, tilt, axis)  # a card's frame, in its own (squarer) proportions
    # Seen this way the plain side ratio strays from a card's; undoing the perspective brings it back.
    assert true_aspect(card) == pytest.approx(layout.TRIM_ASPECT, abs=0.006)
    assert true_aspect(frame) == pytest.approx(0.767, abs=0.006)
    if axis in (0.0, 90.0):
        assert abs(_simple(card) - layout.TRIM_ASPECT) > 0.015


def _grainy(shape: tuple[int, int], level: float, sigma: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.clip(level + rng.normal(0.0, sigma, shape), 0, 255).astype(np.float32)


def _prepared(grey_big: np.ndarray) -> tuple[Directional, np.ndarray, tuple[int, int]]:
    """What the finder reads from a grey photo drawn at twice the working size."""
    small = cv2.resize(grey_big, (grey_big.shape[1] // 2, grey_big.shape[0] // 2), interpolation=cv2.INTER_AREA)
    rgb = np.repeat(np.clip(small, 0, 255).astype(np.uint8)[..., None], 3, axis=2)
    prepared = prepare(rgb, np.clip(grey_big, 0, 255).astype(np.uint8))
    assert prepared.texture is not None
    channels = [*cv2.split(prepared.lab), prepared.texture]
    return Directional.of(channels), np.dstack(channels).astype(np.float32), small.shape


def _box(x0: float, y0: float, x1: float, y1: float) -> np.ndarray:
    return np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], np.float64)


def test_a_frame_inside_a_black_border_on_black_cloth_settles_on_the_card_edge() -> None:
    # At the working size: a card 200 x 279 px, a black border exactly as dark as the cloth (only the cloth's
    # grain tells them apart), a lighter frame inside it, deeper at the bottom.
    card = _box(220, 100, 420, 100 + 200 / layout.TRIM_ASPECT)
    w, h = card[1, 0] - card[0, 0], card[2, 1] - card[0, 1]
    frame = _box(card[0, 0] + 0.042 * w, card[0, 1] + 0.03 * h, card[1, 0] - 0.042 * w, card[0, 1] + 0.885 * h)
    big = _grainy((960, 1280), 20.0, 9.0, seed=1)
    x0, y0, x1, y1 = (card[0] * 2).astype(int).tolist() + (card[2] * 2).astype(int).tolist()
    big[y0:y1, x0:x1] = _grainy((y1 - y0, x1 - x0), 20.0, 1.0, seed=2)  # the printed border: smooth
    fx0, fy0, fx1, fy1 = (frame[0] * 2).astype(int).tolist() + (frame[2] * 2).astype(int).tolist()
    big[fy0:fy1, fx0:fx1] = 150.0
    grad, colours, _ = _prepared(big)
    settled = settle(frame, grad, colours)
    assert np.max(np.linalg.norm(settled - card, axis=1)) <= 3.0, settled.round(1).tolist()
    # On colour alone the card's edge is not there to find: it is the texture channel that shows it.
    blind = settle(frame, Directional.of(list(cv2.split(colours[..., :3]))), colours[..., :3])
    assert np.max(np.linalg.norm(blind - card, axis=1)) > 6.0


def test_a_card_in_a_sleeve_keeps_its_own_edge() -> None:
    # A white-bordered card with a dark frame, in a sleeve whose edge is a light ring 1.5 mm outside the card.
    card = _box(220, 100, 420, 100 + 200 / layout.TRIM_ASPECT)
    w, h = card[1, 0] - card[0, 0], card[2, 1] - card[0, 1]
    margin = 1.5 / 63 * w
    big = _grainy((960, 1280), 90.0, 4.0, seed=3)
    sleeve = card + np.array([[-margin, -margin], [margin, -margin], [margin, margin], [-margin, margin]])
    sx0, sy0, sx1, sy1 = (sleeve[0] * 2).astype(int).tolist() + (sleeve[2] * 2).astype(int).tolist()
    big[sy0:sy1, sx0:sx1] = 120.0  # the surface through the sleeve's tint
    big[sy0:sy0 + 2, sx0:sx1] = big[sy1 - 2:sy1, sx0:sx1] = 210.0  # its edge
    big[sy0:sy1, sx0:sx0 + 2] = big[sy0:sy1, sx1 - 2:sx1] = 210.0
    x0, y0, x1, y1 = (card[0] * 2).astype(int).tolist() + (card[2] * 2).astype(int).tolist()
    big[y0:y1, x0:x1] = 240.0
    fx0, fy0 = round(2 * (card[0, 0] + 0.042 * w)), round(2 * (card[0, 1] + 0.03 * h))
    fx1, fy1 = round(2 * (card[1, 0] - 0.042 * w)), round(2 * (card[0, 1] + 0.885 * h))
    big[fy0:fy1, fx0:fx1] = 60.0
    grad, colours, _ = _prepared(big)
    settled = settle(card, grad, colours)
    assert np.max(np.linalg.norm(settled - card, axis=1)) <= 3.0, settled.round(1).tolist()  # the sleeve: 6.8



def _lab_of(grey: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    rgb = np.repeat(np.clip(grey, 0, 255).astype(np.uint8)[..., None], 3, axis=2)
    prepared = prepare(rgb)
    return prepared.lab, prepared.gradient


def test_a_palm_under_a_card_near_the_frame_is_no_border_run_off_the_photo() -> None:
    # A card 200 px wide whose bottom lies 20 px above the photo's frame, on a palm that reaches 30-35 px beyond its
    # sides (and above it) and runs off the bottom: the palm's band is far wider than a border.
    card = _box(220, 200, 420, 460)
    grey = np.full((480, 640), 60.0, np.float32)
    grey[170:480, 185:455] = 170.0  # the palm, run off the bottom
    grey[200:460, 220:420] = 30.0  # the card
    lab, gradient = _lab_of(grey)
    assert not grow(card, lab, gradient).runs_off
    # The same card's frame inside a border of a border's width, the border run off the bottom: cut off.
    grey = np.full((480, 640), 60.0, np.float32)
    grey[192:480, 212:428] = 170.0  # the border, 8 px wide, run off the bottom
    grey[200:460, 220:420] = 30.0  # the frame
    lab, gradient = _lab_of(grey)
    assert grow(card, lab, gradient).runs_off
