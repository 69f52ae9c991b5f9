"""Cutting the found card out of the full-resolution photo: warped to a portrait card in exactly the trimmed
card's proportions, turned upright, and its corners moved to where its own frame lines put its edges.

`warp_card` cuts a card out of any decode of a photo from normalised corners (the review pages redraw a stored
card with it); `straighten` is the finder's last step (see its docstring).
"""

from __future__ import annotations

import cv2
import numpy as np
from PIL import Image

from stage_e_dagster.domain import layout
from stage_e_dagster.domain.evidence.card_layout import SIZE, fit, fit_turned, read_layout
from stage_e_dagster.domain.evidence.card_orientation import read_orientation

Corner = tuple[float, float]
Corners = tuple[Corner, Corner, Corner, Corner]

# The straightened card's long side never exceeds this (the reader needs no more).
MAX_CARD_LONG_SIDE = 2400
# The frame lines decide which way up when the two ways differ by at least LAYOUT_TURN (`card_layout.Layout`);
# they move the corners when a fit shows at least LAYOUT_FIT of them.
LAYOUT_TURN, LAYOUT_FIT = 0.1, 0.8
# A side turned by the lines (`fit_turned`) moves more than a shift does: it is kept only when the card then shows
# at least this share of its lines.
TURNED_LINES = 0.95
# Fits tried one after another, each on the card straightened by the last kept: the lines' scale and shift on each
# axis (`fit`), or each side's two ends apart (`fit_turned`, True).
ROUNDS = (False, False, True)


def warp_card(image: Image.Image, corners: Corners, long_side: int | None = None) -> Image.Image:
    """The card at `corners` (normalised, reading order, as `FoundCard.corners`) cut out of `image` (which may be
    another decode of the same photo, at any size) and straightened, `long_side` tall (default: as shown)."""
    quad = np.array(corners, np.float64) * np.array(image.size, np.float64)
    return Image.fromarray(_warp(image, quad, long_side), "RGB")


def _warp(image: Image.Image, quad: np.ndarray, long_side: int | None = None) -> np.ndarray:
    shown = max(np.linalg.norm(quad[3] - quad[0]), np.linalg.norm(quad[2] - quad[1]))
    out_h = int(min(MAX_CARD_LONG_SIDE, max(64, round(long_side or shown))))
    out_w = round(out_h * layout.TRIM_ASPECT)
    x0, y0 = (min(max(0, int(v) - 2), lim - 1) for v, lim in zip(quad.min(axis=0), image.size, strict=True))
    x1, y1 = (max(min(lim, int(v) + 3), lo + 1) for v, lim, lo in zip(quad.max(axis=0), image.size, (x0, y0),
                                                                       strict=True))
    patch = np.asarray(image.crop((x0, y0, x1, y1)).convert("RGB"))
    local = (quad - (x0, y0)).astype(np.float32)
    target = np.array([[0, 0], [out_w, 0], [out_w, out_h], [0, out_h]], np.float32)
    return cv2.warpPerspective(patch, cv2.getPerspectiveTransform(local, target), (out_w, out_h),
                               flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


def straighten(image: Image.Image, quad: np.ndarray) -> tuple[Image.Image, float, np.ndarray, float]:
    """The card warped upright from the full image, how sure that way up is, its corners as it reads, and how much
    of a card's frame lines it shows (`card_layout`). The frame lines decide which way up when they clearly tell
    (the colour cues otherwise; when the two disagree the answer is marked unsure), and when they sit off their
    places the corners move to where the lines put the card's edges, each side's two ends fitted apart too (a side
    turned on a line inside the card turns back to its edge). The cues and the fits are read on one small copy of
    the straightened card (moved outlines are warped from it); the full image is warped again only when the
    corners moved."""
    warped = _warp(image, quad)
    small = cv2.resize(warped, SIZE, interpolation=cv2.INTER_AREA)
    orientation = read_orientation(small)
    lines = read_layout(small)
    turn = (lines.turned - lines.score >= LAYOUT_TURN
            or (not orientation.upright and lines.score - lines.turned < LAYOUT_TURN))
    margin = orientation.margin if turn != orientation.upright else 0.0
    if turn:
        warped, small = cv2.rotate(warped, cv2.ROTATE_180), cv2.rotate(small, cv2.ROTATE_180)
        quad = np.roll(quad, 2, axis=0)
    score = first = lines.turned if turn else lines.score
    w, h = SIZE
    frame = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
    to_card = cv2.getPerspectiveTransform(quad.astype(np.float32), frame)  # the photo to the small copy
    card, current = np.eye(3), small  # the current outline's small copy, and the map from it to the first's
    tried = None  # (a plain fit of an unchanged copy is tried once)
    for turned in ROUNDS:  # (a side moved home may let the other axis's lines show, or a turned side's)
        if not turned and tried is current:
            continue
        tried = current
        corners = fit_turned(current, LAYOUT_FIT) if turned else fit(current, LAYOUT_FIT)
        if corners is None:
            continue
        moved = cv2.perspectiveTransform((corners * (w, h))[None], card)[0]
        step = cv2.getPerspectiveTransform(frame, moved.astype(np.float32))
        rewarped = cv2.warpPerspective(small, np.linalg.inv(step), SIZE, flags=cv2.INTER_LINEAR,
                                       borderMode=cv2.BORDER_REPLICATE)
        again = read_layout(rewarped).score
        if (again > score and again >= TURNED_LINES) if turned else again >= score:
            card, current, score = step, rewarped, again
    if current is not small:
        moved = cv2.perspectiveTransform(cv2.perspectiveTransform(frame[None].astype(np.float64), card),
                                         np.linalg.inv(to_card))[0]
        if np.all(moved >= 0) and np.all(moved <= np.array(image.size, np.float64)):
            warped, quad = _warp(image, moved), moved
        else:  # (corners moved off the photo are not kept: the lines' share is the outline's own)
            score = first
    return Image.fromarray(warped, "RGB"), margin, quad, score


def portrait_order(quad: np.ndarray) -> np.ndarray:
    """The clockwise quad rolled so its first side (top-left to top-right) is a short side."""
    sides = [float(np.linalg.norm(quad[(i + 1) % 4] - quad[i])) for i in range(4)]
    return quad if sides[0] + sides[2] <= sides[1] + sides[3] else np.roll(quad, -1, axis=0)


def corners_moved(quad: np.ndarray, fitted: np.ndarray) -> float:
    """How far a fit moved an outline's corners (`straighten`'s corners against the outline's): the farthest
    corner's distance to the nearest fitted corner, as a share of the outline's size (the square root of its area)."""
    size = float(np.sqrt(abs(cv2.contourArea(quad.astype(np.float32)))))
    return max(float(np.min(np.linalg.norm(fitted - corner, axis=1))) for corner in quad) / size
