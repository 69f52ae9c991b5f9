"""A straightened card's own frame lines: the proof that an outline is a whole card, which way up it reads, and
where its edges truly lie.

Every card the readers take has a type line and a text box across its lower half (a borderless card's too, drawn
over the art), and most an art box above them, all at the places `layout` gives. Straightened from a true
outline, those lines lie across the card where `layout` puts them; straightened from a part of a card (its art
box, which is nearly a card's proportions, or the name bar and art alone) or from a patch of the surface, they
do not. So:

- `score` is the share of the frame's lines found across the card near their places: a whole card's is high,
  a part's or a guess's low (the finder skips those rather than answer a wrong outline);
- the same lines read half a turn round tell which way up the card reads, more surely than the colour cues of
  `card_orientation` when the two disagree clearly;
- when a side was settled on the frame's edge inside a border as dark or light as the surface (or on a holder's
  edge), the lines sit stretched or shifted against their places: the scale and shift that put them back say
  where the card's edges are (`fit`);
- when a side was settled on a line inside the card with a slant (the name bar's or the art box's skew read as
  tilt), the lines sit turned against their places: fitted on each half of the card apart, they say where each
  end of each side lies (`fit_turned`).
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

# The copy the lines are read from (w, h): fine enough that lines 1% of the card apart stay apart.
SIZE = (240, 336)
# A line is there where the gradient across it (Lab units per pixel) is at least this along most of its length.
LINE_EDGE = 6.0
# Lines across the card (share of its height, top to bottom): the art box's top and bottom, the type line's top
# and bottom, the text box's top and bottom; each looked for within SLACK of its place.
ACROSS = (0.115, 0.555, 0.565, 0.615, 0.63, 0.88)
# Lines along the card (share of its width): the text box's sides, over the text box's rows.
ALONG = (0.075, 0.925)
ALONG_ROWS = (0.65, 0.86)
# Fitting also takes the frame's own sides outside them (an equally spaced pair of lines otherwise fits the text
# box's sides or the frame's alike).
FIT_ALONG = (0.042, *ALONG, 0.958)
SLACK = 0.02
# A whole card's straightened face shows at least this share of its frame lines; below it the outline is a part of
# a card, a guess, or off by more than the lines can be fitted back.
LAYOUT_MIN = 0.9
# The scales and shifts (share of the card) tried when fitting the lines back to their places.
SCALES = np.arange(0.90, 1.1001, 0.0025)
NEAR_SCALES = SCALES[np.abs(SCALES - 1) <= 0.04]
SHIFTS = np.arange(-0.07, 0.0701, 1 / SIZE[1])
# The halves of the card fitted apart to turn a side: the lines across on the left and the right columns, the
# lines along on the art box's rows and on the text box's (share of the card).
HALF_COLUMNS = ((0.12, 0.5), (0.5, 0.88))
HALF_ROWS = ((0.15, 0.52), ALONG_ROWS)
# A half's lines along the card are taken when they show at least this share: three of its four (the frame's side
# beyond a side turned into the card may lie outside the straightened copy).
HALF_ALONG = 0.7
# Opposite sides both turned the same way by more than this (share of the card between a side's two ends) turn the
# whole card: the outline did not lie on the card's edges but across its printing, and is not turned.
TURN_BOTH = 0.04


@dataclass(frozen=True)
class Layout:
    """How much of the frame's lines a straightened card shows where `layout` puts them, as given and half a turn
    round (0..1)."""

    score: float
    turned: float


def _gradients(card_rgb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    small = cv2.resize(card_rgb, SIZE, interpolation=cv2.INTER_AREA)
    lab = cv2.cvtColor(cv2.GaussianBlur(small, (3, 3), 0), cv2.COLOR_RGB2LAB)
    gx = np.max([np.abs(cv2.Sobel(c, cv2.CV_32F, 1, 0, ksize=3)) for c in cv2.split(lab)], axis=0) / 4.0
    gy = np.max([np.abs(cv2.Sobel(c, cv2.CV_32F, 0, 1, ksize=3)) for c in cv2.split(lab)], axis=0) / 4.0
    return gx, gy


def _profiles(gx: np.ndarray, gy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the share of the middle columns on a line across; per column, the share of the text box's rows on
    a line along. (Given the gradients themselves rather than whether they pass LINE_EDGE, the mean gradient.)"""
    h, w = gy.shape
    rows = gy[:, round(0.12 * w):round(0.88 * w)].mean(axis=1)
    cols = gx[round(ALONG_ROWS[0] * h):round(ALONG_ROWS[1] * h)].mean(axis=0)
    return rows, cols


def _found(profile: np.ndarray, places: tuple[float, ...]) -> float:
    """The mean over `places` of the best profile value within SLACK of each."""
    n = len(profile)
    return float(np.mean([profile[max(0, round((p - SLACK) * n)):round((p + SLACK) * n) + 1].max() for p in places]))


def _score(gx: np.ndarray, gy: np.ndarray) -> float:
    rows, cols = _profiles(gx, gy)
    return (len(ACROSS) * _found(rows, ACROSS) + len(ALONG) * _found(cols, ALONG)) / (len(ACROSS) + len(ALONG))


def read_layout(card_rgb: np.ndarray) -> Layout:
    """The frame lines' score of a portrait card image (any size), as given and turned half a turn."""
    gx, gy = (g >= LINE_EDGE for g in _gradients(card_rgb))
    return Layout(_score(gx, gy), _score(gx[::-1, ::-1], gy[::-1, ::-1]))


def _fit_axis(profile: np.ndarray, places: tuple[float, ...], strength: np.ndarray | None = None,
              scales: np.ndarray = SCALES) -> tuple[float, float, float]:
    """The scale and shift (a, b) that put `places` (p) on the profile's lines at a * p + b, and the mean profile
    there. A line a few pixels thick passes along its whole width: of such fits, the one on the lines' middles
    (the strongest mean gradient, `strength`), and of equally good ones, the one nearest no change."""
    n = len(profile)
    p = np.asarray(places)
    at = scales[:, None, None] * p[None, None, :] + SHIFTS[None, :, None]  # (S, B, P)
    idx = np.rint(at * n).astype(int)
    ok = (idx >= 0) & (idx < n)
    value = np.where(ok, profile[np.clip(idx, 0, n - 1)], 0.0).mean(axis=2)
    cost = value - 0.05 * np.abs(scales - 1)[:, None] - 0.05 * np.abs(SHIFTS)[None, :]
    if strength is not None:
        sharp = strength / max(float(strength.max()), 1e-6)
        cost = cost + 0.5 * np.where(ok, sharp[np.clip(idx, 0, n - 1)], 0.0).mean(axis=2)
    s, b = np.unravel_index(int(np.argmax(cost)), cost.shape)
    return float(scales[s]), float(SHIFTS[b]), float(value[s, b])


def fit(card_rgb: np.ndarray, least: float) -> np.ndarray | None:
    """Where the card's corners lie in a straightened image whose lines sit off their places (4 x 2: x, y as shares
    of the image, clockwise from the top left), or None when the lines are where they belong or no fit shows at
    least `least` of them (a fit to lines one cannot see is no better than the outline it would move). Each axis
    takes its own scale and shift (a side settled on a line inside the card, or outside it, moves alone), and an
    axis whose lines do not show at least `least` stays as it is."""
    gx, gy = _gradients(card_rgb)
    rows, cols = _profiles(gx >= LINE_EDGE, gy >= LINE_EDGE)
    row_strength, col_strength = _profiles(np.minimum(gx, 4 * LINE_EDGE), np.minimum(gy, 4 * LINE_EDGE))
    ay, by, vy = _fit_axis(rows, ACROSS, row_strength)
    ax, bx, vx = _fit_axis(cols, FIT_ALONG, col_strength)
    if vx < least:  # no frame's sides seen: the text box's alone, at scales that cannot take the frame's for them
        ax, bx, vx = _fit_axis(cols, ALONG, col_strength, NEAR_SCALES)
    if vy < least and vx < least:
        return None
    x0, x1 = (bx, ax + bx) if vx >= least else (0.0, 1.0)  # an axis whose lines do not show stays as it is
    y0, y1 = (by, ay + by) if vy >= least else (0.0, 1.0)
    if max(abs(x0), abs(x1 - 1), abs(y0), abs(y1 - 1)) < 0.006:
        return None
    return np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], np.float64)


def _axis(profile: np.ndarray, strength: np.ndarray, places: tuple[float, ...], least: float,
          near: tuple[float, ...] | None = None) -> tuple[float, float] | None:
    """The scale and shift that put `places` on a profile's lines, or None when they show under `least` there
    (`near`: places tried next at scales near 1, when the first show too little)."""
    a, b, v = _fit_axis(profile, places, strength)
    if v < least and near is not None:
        a, b, v = _fit_axis(profile, near, strength, NEAR_SCALES)
    return (a, b) if v >= least else None


def _meet(p: np.ndarray, q: np.ndarray, r: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Where the line through p and q meets the line through r and s."""
    d1, d2, e = q - p, s - r, r - p
    t = (e[0] * d2[1] - e[1] * d2[0]) / (d1[0] * d2[1] - d1[1] * d2[0])
    return p + t * d1


def fit_turned(card_rgb: np.ndarray, least: float) -> np.ndarray | None:
    """Where the card's corners lie in a straightened image whose sides lie turned against the card's edges (as
    `fit`), or None: the lines across fitted on the card's left and right columns apart, and the lines along on
    its art box's rows and its text box's apart, give each side's two ends. Every half must show at least `least`
    of its lines (HALF_ALONG along the card): a side is turned only where both its ends are seen; and a fit that
    turns two opposite sides the same way (TURN_BOTH) turns the whole card, which no settled side explains."""
    gx, gy = _gradients(card_rgb)
    h, w = gy.shape
    ex, ey = gx >= LINE_EDGE, gy >= LINE_EDGE
    sx, sy = np.minimum(gx, 4 * LINE_EDGE), np.minimum(gy, 4 * LINE_EDGE)
    across, along = [], []
    for lo, hi in HALF_COLUMNS:
        cols = slice(round(lo * w), round(hi * w))
        fitted = _axis(ey[:, cols].mean(axis=1), sy[:, cols].mean(axis=1), ACROSS, least)
        if fitted is None:
            return None
        across.append(((lo + hi) / 2, *fitted))
    for lo, hi in HALF_ROWS:
        rows = slice(round(lo * h), round(hi * h))
        fitted = _axis(ex[rows].mean(axis=0), sx[rows].mean(axis=0), FIT_ALONG, min(least, HALF_ALONG), ALONG)
        if fitted is None:
            return None
        along.append(((lo + hi) / 2, *fitted))
    (cl, al, bl), (cr, ar, br) = across
    (cu, au, bu), (cd, ad, bd) = along
    top = np.array([cl, bl]), np.array([cr, br])
    bottom = np.array([cl, al + bl]), np.array([cr, ar + br])
    left = np.array([bu, cu]), np.array([bd, cd])
    right = np.array([au + bu, cu]), np.array([ad + bd, cd])
    corners = np.array([_meet(*top, *left), _meet(*top, *right), _meet(*bottom, *right), _meet(*bottom, *left)])
    if np.max(np.abs(corners - [[0, 0], [1, 0], [1, 1], [0, 1]])) < 0.006:
        return None
    across_turns = corners[1, 1] - corners[0, 1], corners[2, 1] - corners[3, 1]  # the top's, the bottom's
    along_turns = corners[3, 0] - corners[0, 0], corners[2, 0] - corners[1, 0]  # the left side's, the right's
    if any(a * b > 0 and min(abs(a), abs(b)) > TURN_BOTH for a, b in (across_turns, along_turns)):
        return None
    return corners
