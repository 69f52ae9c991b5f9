"""Settling a rough outline on the card's own edges, with a card's proportions as a strong prior.

The strongest outline in a photo is not always the card's edge: the frame inside a dark border on a dark surface,
a line of text inside a white border on a white cloth, or a glare band across one side can stand for a side.
`settle` looks across a band round each side of an outline for straight edges nearly parallel to it (the gradient
across the line, on every Lab channel and on texture, so a glare band or a thumb over part of a side only weakens
it), and of every choice of one candidate per side keeps the quad whose sides are strong and whose proportions,
perspective undone (`true_aspect`), are a card's (63 x 88 mm). A side moves outwards across a band of the card's
border to where it stops (the card's physical edge is the outermost of its straight edges) when the bands are a
border's: three about even and a deeper bottom, or an even ring of a border's width; an even ring narrower or
wider than that is a sleeve's or top-loader's edge, and the card inside it is kept.

`texture_of` is the texture channel the outline search and the settling read beside colour.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from stage_e_dagster.domain import layout

# Texture (log of the local grey deviation) in Lab-like units, so its gradient compares with colour gradients.
TEXTURE_GAIN = 40.0
# A directional gradient (Lab-like units per pixel) at or above this counts fully along a line.
LINE_CAP = 8.0
# A line is a candidate edge when its mean capped gradient (0..1) reaches this.
LINE_MIN = 0.6
# A candidate's strength counts fully from this on (a faint but whole edge is as good as a sharp one).
LINE_FULL = 0.8
# How far each side may move: inwards and outwards, as shares of the outline's long side.
SETTLE_IN, SETTLE_OUT = 0.015, 0.17
# Turns of a side tried, in degrees.
SETTLE_TURNS = np.arange(-6.0, 6.01, 1.0)
# The cost of a quad's proportions straying from a card's (per unit of short-over-long), and of moving a side.
ASPECT_WEIGHT, MOVE_COST = 25.0, 0.05
# Proportions within this of a card's cost nothing (a tilt of a few degrees changes them that much).
ASPECT_FREE = 0.008
# Moving a side outwards across a band of the card's border to where it stops gains this (the card's edge is
# the outermost of its straight edges).
OUT_GAIN = 0.15
# A band of one colour: its median spread at most BAND_SPREAD; unlike what lies beyond: at least BAND_DELTA away
# (Lab and texture units).
BAND_SPREAD, BAND_DELTA = 14.0, 7.0
# A candidate edge this strong inside a band means the band is not a card's border.
BAND_INNER_EDGE = 0.9
# A card's border round its frame: three sides about even (the widest under HOLDER_RATIO times the narrowest),
# the bottom at least BOTTOM_RATIO times deeper than the middle one. An even ring is a holder's edge.
HOLDER_RATIO, BOTTOM_RATIO = 1.6, 1.5
# An even ring this wide (share of the card's short side: 2 to 4 mm of 63) is a border; narrower is a sleeve's
# margin, wider a top-loader's.
EVEN_BORDER = (0.032, 0.064)
# Opposite sides may converge this much (degrees) for free (a tilt of 15 degrees); beyond, each degree costs.
SKEW_FREE, SKEW_WEIGHT = 6.0, 0.1
# The camera's distance (its focal length) in long sides of the card, for undoing perspective.
FOCAL_SIDES = 2.0
# Candidate edges kept per side, the sharpest, and the outermost always (a card's frame, name bar and art box give
# sharp inner edges; the card's own edge, often softer, must stay among them).
PEAKS = 10



def texture_of(grey: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """How grainy the photo is at each place, at `shape` (h, w), in Lab-like units: the log of the local deviation
    of a grey copy (at about twice the small copy's size) from its 3x3 mean. A printed card is smooth; a cloth's
    weave, a wood's grain or a palm's skin is not, so a black card on a black cloth still shows its edge here."""
    grey = grey.astype(np.float32)
    high = grey - cv2.blur(grey, (3, 3))
    deviation = cv2.sqrt(cv2.blur(high * high, (5, 5)))
    small = cv2.resize(deviation, (shape[1], shape[0]), interpolation=cv2.INTER_AREA)
    return cv2.GaussianBlur(np.log1p(small) * TEXTURE_GAIN, (5, 5), 0)


@dataclass(frozen=True)
class Directional:
    """Per-channel x and y gradients of the small copy (Lab and texture), for gradients across a line."""

    gx: np.ndarray  # (C, h, w)
    gy: np.ndarray

    @classmethod
    def of(cls, channels: list[np.ndarray]) -> Directional:
        gx = np.stack([cv2.Sobel(c, cv2.CV_32F, 1, 0, ksize=3) / 4.0 for c in channels])
        gy = np.stack([cv2.Sobel(c, cv2.CV_32F, 0, 1, ksize=3) / 4.0 for c in channels])
        return cls(gx, gy)

    def across(self, pts: np.ndarray, normal: np.ndarray) -> np.ndarray:
        """The strongest channel's gradient across lines with unit `normal` (..., 2) at points `pts` (..., 2);
        zero outside the image."""
        _, h, w = self.gx.shape
        inside = (pts[..., 0] >= 0) & (pts[..., 0] <= w - 1) & (pts[..., 1] >= 0) & (pts[..., 1] <= h - 1)
        px = np.clip(np.rint(pts[..., 0]).astype(int), 0, w - 1)
        py = np.clip(np.rint(pts[..., 1]).astype(int), 0, h - 1)
        value = np.abs(self.gx[:, py, px] * normal[..., 0] + self.gy[:, py, px] * normal[..., 1]).max(axis=0)
        return np.where(inside, value, 0.0)


def _side_candidates(quad: np.ndarray, i: int, grad: Directional, long_side: float) -> list[tuple[float, float, float]]:
    """Straight edges near side i, roughly parallel to it: (offset outwards, turn in radians, strength 0..1),
    the strongest few local maxima over offset."""
    a, b = quad[i], quad[(i + 1) % 4]
    mid = (a + b) / 2
    length = float(np.linalg.norm(b - a))
    base = np.arctan2(*(b - a)[::-1])
    turns = np.radians(SETTLE_TURNS)
    angles = base + turns
    u = np.stack([np.cos(angles), np.sin(angles)], axis=1)  # (A, 2)
    n = np.stack([np.sin(angles), -np.cos(angles)], axis=1)  # outwards for a clockwise quad (y down)
    offsets = np.arange(-max(2, round(SETTLE_IN * long_side)), round(SETTLE_OUT * long_side) + 1, dtype=np.float64)
    t = np.linspace(-0.38, 0.38, 28) * length
    pts = (mid + offsets[None, :, None, None] * n[:, None, None, :] + t[None, None, :, None] * u[:, None, None, :])
    value = grad.across(pts, np.broadcast_to(n[:, None, None, :], pts.shape))  # (A, O, T)
    score = np.mean(np.minimum(value, LINE_CAP), axis=2) / LINE_CAP  # (A, O): how whole the line is
    sharp = np.mean(value, axis=2) / (6 * LINE_CAP)  # where exactly it lies (uncapped: no plateau)
    ranked = score + 0.05 * sharp - 0.005 * np.abs(SETTLE_TURNS)[:, None]  # of equal lines, the least turned
    pick = ranked.argmax(axis=0)
    rank = ranked[pick, np.arange(len(offsets))]
    best = score[pick, np.arange(len(offsets))]
    turn = turns[pick]
    peaks = [k for k in range(len(offsets)) if best[k] >= LINE_MIN and rank[k] >= rank[max(0, k - 2):k + 3].max()]
    peaks.sort(key=lambda k: -rank[k])
    kept = peaks[:PEAKS] + [k for k in peaks[PEAKS:] if offsets[k] == max(offsets[j] for j in peaks)][:1]
    found = [(float(offsets[k]), float(turn[k]), float(best[k])) for k in kept]
    here = int(np.argmin(np.abs(offsets)))
    straight = int(np.argmin(np.abs(SETTLE_TURNS)))
    return [*found, (0.0, 0.0, float(score[straight, here]))]  # the side as it is, always a choice


def _band_differs(quad: np.ndarray, i: int, offset: float, turn: float, colours: np.ndarray) -> bool:
    """Whether the band between side i and a line `offset` out (turned by `turn`) is one colour and texture that
    differs from what lies beyond that line: a card's border out to its edge, not more of the surface."""
    a, b = quad[i], quad[(i + 1) % 4]
    angle = np.arctan2(*(b - a)[::-1]) + turn
    u = np.array([np.cos(angle), np.sin(angle)])
    n = np.array([u[1], -u[0]])
    t = np.linspace(-0.35, 0.35, 20) * float(np.linalg.norm(b - a))
    mid = (a + b) / 2

    def sample(lo: float, hi: float) -> np.ndarray:
        steps = np.arange(lo, hi + 0.5)
        pts = mid + steps[:, None, None] * n + t[None, :, None] * u  # band lines are parallel to the new line
        h, w = colours.shape[:2]
        px = np.clip(np.rint(pts[..., 0]).astype(int), 0, w - 1)
        py = np.clip(np.rint(pts[..., 1]).astype(int), 0, h - 1)
        return colours[py, px].reshape(-1, colours.shape[2])

    band, beyond = sample(2, offset - 2), sample(offset + 2, offset + 5)
    if len(band) == 0:
        return False
    centre = np.median(band, axis=0)
    uniform = float(np.median(np.linalg.norm(band - centre, axis=1))) <= BAND_SPREAD
    return uniform and float(np.linalg.norm(centre - np.median(beyond, axis=0))) >= BAND_DELTA


def settle(quad: np.ndarray, grad: Directional, colours: np.ndarray | None = None) -> np.ndarray:
    """The card's own outline near a clockwise quad (small-copy pixels): each side moved (a little in, or out up
    to SETTLE_OUT) and turned to a straight edge near it, the four chosen together (see the module's docstring).
    `colours` (h, w, C: Lab and texture) lets a side cross a band of the card's border; without it no side gains
    by moving out."""
    long_side = max(float(np.linalg.norm(quad[(i + 1) % 4] - quad[i])) for i in range(4))
    points, directions, offsets, strengths, borders = [], [], [], [], []
    for i in range(4):
        found = _side_candidates(quad, i, grad, long_side)
        a, b = quad[i], quad[(i + 1) % 4]
        angles = np.arctan2(*(b - a)[::-1]) + np.array([t for _, t, _ in found])
        u = np.stack([np.cos(angles), np.sin(angles)], axis=1)
        offset = np.array([o for o, _, _ in found])
        points.append((a + b) / 2 + offset[:, None] * np.stack([u[:, 1], -u[:, 0]], axis=1))
        directions.append(u)
        offsets.append(offset)
        strengths.append(np.minimum(1.0, np.array([s for _, _, s in found]) / LINE_FULL))
        # A border band has no sharp edge inside it (a holder's rim between the card and its outer edge has).
        borders.append(np.array([colours is not None and o > 4 and _band_differs(quad, i, o, t, colours)
                                 and not any(2 < o2 < o - 2 and s2 >= BAND_INNER_EDGE for o2, _, s2 in found)
                                 for o, t, _ in found]))
    grid = np.stack(np.meshgrid(*(np.arange(len(o)) for o in offsets), indexing="ij"), axis=-1).reshape(-1, 4)
    pick = [grid[:, i] for i in range(4)]
    p = np.stack([points[i][pick[i]] for i in range(4)], axis=1)  # (N, 4, 2): a point on each side's line
    u = np.stack([directions[i][pick[i]] for i in range(4)], axis=1)
    offset = np.stack([offsets[i][pick[i]] for i in range(4)], axis=1)
    out = np.stack([np.where(borders[i][pick[i]], offsets[i][pick[i]], 0.0) for i in range(4)], axis=1)
    strength = sum(strengths[i][pick[i]] for i in range(4))
    # Corner i is where side i - 1 meets side i.
    pp, up = np.roll(p, 1, axis=1), np.roll(u, 1, axis=1)
    det = up[..., 0] * -u[..., 1] - up[..., 1] * -u[..., 0]
    safe = np.where(np.abs(det) < 1e-6, 1.0, det)
    along = ((p[..., 0] - pp[..., 0]) * -u[..., 1] - (p[..., 1] - pp[..., 1]) * -u[..., 0]) / safe
    corners = pp + along[..., None] * up
    valid = np.all(np.abs(det) >= 1e-6, axis=1) & _convex(corners)
    aspect = true_aspects(corners)
    out = np.where(_border_rings(out, corners)[:, None], out, 0.0)
    score = (strength - ASPECT_WEIGHT * np.maximum(0.0, np.abs(aspect - layout.TRIM_ASPECT) - ASPECT_FREE)
             - MOVE_COST * np.sum(np.abs(offset) > 2, axis=1)
             - SKEW_WEIGHT * np.maximum(0.0, _skews(corners) - SKEW_FREE)
             + OUT_GAIN * np.sum(out > 0, axis=1))
    score = np.where(valid, score, -np.inf)
    best = int(np.argmax(score))
    return corners[best] if np.isfinite(score[best]) else quad


def _sides(quads: np.ndarray) -> np.ndarray:
    """Side lengths (N, 4) of quads (N, 4, 2): side i runs from corner i to corner i + 1."""
    return np.linalg.norm(np.roll(quads, -1, axis=1) - quads, axis=2)


def _simple_aspects(quads: np.ndarray) -> np.ndarray:
    s = _sides(quads)
    a, b = (s[:, 0] + s[:, 2]) / 2, (s[:, 1] + s[:, 3]) / 2
    return np.minimum(a, b) / np.maximum(np.maximum(a, b), 1e-9)


def true_aspects(quads: np.ndarray) -> np.ndarray:
    """Short over long side of the rectangles clockwise quads (N, 4, 2) show, perspective undone: the camera
    taken as aimed at each quad's centre from FOCAL_SIDES of its long sides away (a phone photographing a card),
    the corners' rays met by a plane (the whiteboard construction of Zhang and He, with the focal length given
    rather than estimated: estimating it from a small copy's corners is far noisier than this guess is wrong).
    Where the construction fails (sides parallel in the image), the quad is taken as seen straight on."""
    m = np.concatenate([quads - quads.mean(axis=1, keepdims=True), np.ones(quads.shape[:2] + (1,))], axis=2)
    m1, m2, m4, m3 = m[:, 0], m[:, 1], m[:, 2], m[:, 3]  # top-left, top-right, bottom-right, bottom-left
    d2 = np.sum(np.cross(m2, m4) * m3, axis=1)
    d3 = np.sum(np.cross(m3, m4) * m2, axis=1)
    ok = (np.abs(d2) > 1e-9) & (np.abs(d3) > 1e-9)
    d2, d3 = np.where(ok, d2, 1.0), np.where(ok, d3, 1.0)
    n2 = (np.sum(np.cross(m1, m4) * m3, axis=1) / d2)[:, None] * m2 - m1
    n3 = (np.sum(np.cross(m1, m4) * m2, axis=1) / d3)[:, None] * m3 - m1
    f2 = (FOCAL_SIDES * _sides(quads).max(axis=1)) ** 2
    w2 = n2[:, 0] ** 2 + n2[:, 1] ** 2 + f2 * n2[:, 2] ** 2
    h2 = n3[:, 0] ** 2 + n3[:, 1] ** 2 + f2 * n3[:, 2] ** 2
    ok &= (w2 > 0) & (h2 > 0)
    ratio = np.sqrt(np.where(ok, w2, 1.0) / np.where(ok, h2, 1.0))
    return np.where(ok, np.minimum(ratio, 1 / np.maximum(ratio, 1e-9)), _simple_aspects(quads))


def true_aspect(quad: np.ndarray) -> float:
    """`true_aspects` of one quad (4, 2)."""
    return float(true_aspects(np.asarray(quad, np.float64)[None])[0])


def _border_rings(out: np.ndarray, quads: np.ndarray) -> np.ndarray:
    """Whether outward moves (N, 4) to quads are a card's border round its frame: every side out, three about
    evenly (the top and the long sides) and one at least BOTTOM_RATIO times deeper (the bottom border, under the
    collector line); or three or four sides out evenly by a border's width (EVEN_BORDER of the card's short
    side: more than a sleeve's margin, less than a top-loader's; the bottom border's text may hide one band)."""
    o = np.sort(out, axis=1)
    framed = (o[:, 0] > 0) & (o[:, 3] >= BOTTOM_RATIO * o[:, 1]) & (o[:, 2] <= HOLDER_RATIO * o[:, 0])
    first = np.where(o[:, 0] > 0, o[:, 0], o[:, 1])
    middle = np.where(o[:, 0] > 0, (o[:, 1] + o[:, 2]) / 2, o[:, 2])
    width = middle / np.maximum(_sides(quads).min(axis=1), 1.0)
    even = ((first > 0) & (o[:, 3] <= HOLDER_RATIO * first)
            & (width >= EVEN_BORDER[0]) & (width <= EVEN_BORDER[1]))
    return framed | even


def _skews(quads: np.ndarray) -> np.ndarray:
    """The larger angle, in degrees, between opposite sides (a tilted card's converge a little)."""
    worst = np.zeros(len(quads))
    for i in (0, 1):
        u, v = quads[:, i + 1] - quads[:, i], quads[:, i + 2] - quads[:, (i + 3) % 4]
        cos = np.abs(np.sum(u * v, axis=1)) / (np.linalg.norm(u, axis=1) * np.linalg.norm(v, axis=1) + 1e-9)
        worst = np.maximum(worst, np.degrees(np.arccos(np.clip(cos, -1.0, 1.0))))
    return worst


def _convex(quads: np.ndarray) -> np.ndarray:
    e = np.roll(quads, -1, axis=1) - quads
    f = np.roll(e, -1, axis=1)
    cross = e[..., 0] * f[..., 1] - e[..., 1] * f[..., 0]
    return np.all(cross > 0, axis=1) | np.all(cross < 0, axis=1)
