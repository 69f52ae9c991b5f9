"""From a card's frame out to its edge: when the strongest outline is the frame inside a card's border.

A black border on a dark table, or a white one on a white cloth, leaves the card's own edge faint while the edge
between the border and the frame stays strong, so the best outline can be the frame. Walking out from each side
of an outline, across a band of one colour (the border), to a line where that colour stops: that line is the
card's edge. It is taken only when all four sides find it and the grown outline is longer for its width than the
frame (a card's bottom border is the deepest), so a sleeve's or top-loader's edge, or a table's pattern, is never
mistaken for it. A border that runs on to the photo's frame on some sides while others find the card's edge is a
card cut off by the frame.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from stage_e_dagster.domain import layout

# Colour distance (Lab, 8-bit scale) within which a pixel is the border's colour.
BORDER_DELTA = 20.0
# How far out to look, as a share of the outline's long side.
REACH = 0.16
# An outline squarer than this (short over long) is too square for a card seen at up to 15 degrees.
SQUARE_ASPECT = 0.75
# The weakest edge (Lab units per pixel) a faint card edge may show.
FAINT_EDGE = 5.0


@dataclass(frozen=True)
class Grown:
    """What walking out from an outline found: the grown quad, or that the border runs off the photo."""

    quad: np.ndarray | None
    runs_off: bool


def _line_points(a: np.ndarray, b: np.ndarray, offset: float, normal: np.ndarray, samples: int = 24) -> np.ndarray:
    t = np.linspace(0.12, 0.88, samples)[:, None]
    return a + t * (b - a) + offset * normal


def _lookup(img: np.ndarray, pts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    h, w = img.shape[:2]
    inside = (pts[:, 0] >= 0) & (pts[:, 0] <= w - 1) & (pts[:, 1] >= 0) & (pts[:, 1] <= h - 1)
    px = np.clip(np.rint(pts[:, 0]).astype(int), 0, w - 1)
    py = np.clip(np.rint(pts[:, 1]).astype(int), 0, h - 1)
    return img[py, px], inside


def _walk(lab: np.ndarray, gradient: np.ndarray, a: np.ndarray, b: np.ndarray, reach: int) -> tuple[str, float]:
    """('edge', offset) where the border's colour stops at a faint line; ('frame', offset) where the border runs
    on to the photo's frame; ('none', 0) when there is no band of one colour outside this side."""
    d = b - a
    normal = np.array([d[1], -d[0]]) / (np.linalg.norm(d) + 1e-9)  # outward for a clockwise outline (y down)
    reference = []
    for offset in (4, 5, 6):
        colours, inside = _lookup(lab, _line_points(a, b, offset, normal))
        reference.append(colours[inside])
    ref = np.concatenate(reference)
    if len(ref) < 20:
        return "frame", 3.0
    colour = np.median(ref, axis=0)
    if np.median(np.linalg.norm(ref - colour, axis=1)) > BORDER_DELTA * 0.75:
        return "none", 0.0
    for offset in range(7, reach + 1):
        pts = _line_points(a, b, offset, normal)
        inner, inside = _lookup(lab, pts - 2 * normal)
        outer, outside_ok = _lookup(lab, pts + 2 * normal)
        if np.mean(inside) < 0.5 or np.mean(outside_ok) < 0.5:
            return "frame", float(offset)
        inner_like = np.mean(np.linalg.norm(inner - colour, axis=1) < BORDER_DELTA)
        outer_unlike = np.mean(np.linalg.norm(outer - colour, axis=1) >= BORDER_DELTA)
        if inner_like >= 0.4 and outer_unlike >= 0.6:
            edge, _ = _lookup(gradient, pts)
            if np.mean(edge >= FAINT_EDGE) >= 0.4:
                return "edge", float(offset)
    return "none", 0.0


def _shift(quad: np.ndarray, offsets: list[float]) -> np.ndarray:
    """The quad with each side moved out by its offset, corners where the moved sides meet."""
    lines = []
    for i in range(4):
        a, b = quad[i], quad[(i + 1) % 4]
        d = (b - a) / (np.linalg.norm(b - a) + 1e-9)
        lines.append((a + offsets[i] * np.array([d[1], -d[0]]), d))
    out = []
    for i in range(4):
        (p, u), (q, v) = lines[i - 1], lines[i]
        det = u[0] * -v[1] - u[1] * -v[0]
        if abs(det) < 1e-6:
            return quad
        t = ((q[0] - p[0]) * -v[1] - (q[1] - p[1]) * -v[0]) / det
        out.append(p + t * u)
    return np.array(out)


def _aspect(quad: np.ndarray) -> float:
    s = [float(np.linalg.norm(quad[(i + 1) % 4] - quad[i])) for i in range(4)]
    a, b = (s[0] + s[2]) / 2, (s[1] + s[3]) / 2
    return min(a, b) / max(a, b)


def _one_side(quad: np.ndarray, walks: list[tuple[str, float]]) -> np.ndarray | None:
    """The quad grown by the one side that brings a too-square outline nearest a card's proportions."""
    aspect = _aspect(quad)
    if aspect <= SQUARE_ASPECT:
        return None
    best, best_gap = None, abs(aspect - layout.TRIM_ASPECT) - 0.02
    for i, (kind, offset) in enumerate(walks):
        if kind != "edge":
            continue
        grown = _shift(quad, [offset if j == i else 0.0 for j in range(4)])
        gap = abs(_aspect(grown) - layout.TRIM_ASPECT)
        if gap < best_gap:
            best, best_gap = grown, gap
    return best


def grow(quad: np.ndarray, lab: np.ndarray, gradient: np.ndarray) -> Grown:
    """Walk out from a clockwise quad's sides (see the module's docstring). An outline too square for a card
    (a frame cut short at the bottom by a dark bottom border on a dark surface) may grow by one side alone."""
    sides = [float(np.linalg.norm(quad[(i + 1) % 4] - quad[i])) for i in range(4)]
    reach = max(8, round(REACH * max(sides)))
    walks = [_walk(lab, gradient, quad[i], quad[(i + 1) % 4], reach) for i in range(4)]
    kinds = [k for k, _ in walks]
    if kinds.count("edge") >= 2 and kinds.count("frame") >= 1 and "none" not in kinds:
        return Grown(None, runs_off=True)
    if kinds.count("edge") < 4:
        return Grown(_one_side(quad, walks), runs_off=False)
    grown = _shift(quad, [offset for _, offset in walks])
    ratio = _aspect(grown) / _aspect(quad)
    if not 0.86 <= ratio <= 0.985:
        return Grown(None, runs_off=False)
    return Grown(grown, runs_off=False)


# --- Settling an outline on the card's own edges ---------------------------------------------------------------

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
    sharp = np.mean(np.minimum(value, 6 * LINE_CAP), axis=2) / (6 * LINE_CAP)  # where exactly it lies
    ranked = score + 0.05 * sharp - 0.005 * np.abs(SETTLE_TURNS)[:, None]  # of equal lines, the least turned
    pick = ranked.argmax(axis=0)
    rank = ranked[pick, np.arange(len(offsets))]
    best = score[pick, np.arange(len(offsets))]
    turn = turns[pick]
    peaks = [k for k in range(len(offsets)) if best[k] >= LINE_MIN and rank[k] >= rank[max(0, k - 2):k + 3].max()]
    peaks.sort(key=lambda k: -rank[k])
    found = [(float(offsets[k]), float(turn[k]), float(best[k])) for k in peaks[:5]]
    here = int(np.argmin(np.abs(offsets)))
    straight = int(np.argmin(np.abs(SETTLE_TURNS)))
    return [*found, (0.0, 0.0, float(score[straight, here]))]  # the side as it is, always a choice


def _meet(lines: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray | None:
    out = []
    for i in range(4):
        (p, u), (q, v) = lines[i - 1], lines[i]
        det = u[0] * -v[1] - u[1] * -v[0]
        if abs(det) < 1e-6:
            return None
        s = ((q[0] - p[0]) * -v[1] - (q[1] - p[1]) * -v[0]) / det
        out.append(p + s * u)
    return np.array(out)


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
    """The card's own outline near a clockwise quad: each side moved (a little in, or out up to SETTLE_OUT) and
    turned to a straight edge near it, the four chosen together so the quad takes a card's proportions.

    The strongest outline is not always the card's edge: a frame inside a dark border on a dark surface, or a
    line of text inside a white border on a white cloth, can stand for a side. Each side's candidate edges are
    found across a band around it (gradient across the line, on every colour channel and on texture, so a glare
    band or a thumb over part of a side only weakens it); of every choice of one candidate per side, the one whose
    sides are strong and whose proportions are a card's (63 x 88 mm) wins, moving as few sides as it can."""
    long_side = max(float(np.linalg.norm(quad[(i + 1) % 4] - quad[i])) for i in range(4))
    options = []
    for i in range(4):
        found = _side_candidates(quad, i, grad, long_side)
        # A border band has no sharp edge inside it (a holder's rim between the card and its outer edge has).
        options.append([(o, t, st, colours is not None and o > 4 and _band_differs(quad, i, o, t, colours)
                         and not any(2 < o2 < o - 2 and s2 >= BAND_INNER_EDGE for o2, _, s2 in found))
                        for o, t, st in found])
    best, best_score = quad, -np.inf
    for choice in np.ndindex(*(len(o) for o in options)):
        lines, strength, moved, out = [], 0.0, 0, []
        for i, k in enumerate(choice):
            offset, turn, s, border = options[i][k]
            out.append(offset if border else 0.0)
            a, b = quad[i], quad[(i + 1) % 4]
            angle = np.arctan2(*(b - a)[::-1]) + turn
            u = np.array([np.cos(angle), np.sin(angle)])
            lines.append(((a + b) / 2 + offset * np.array([u[1], -u[0]]), u))
            strength += min(1.0, s / LINE_FULL)
            moved += abs(offset) > 2
        corners = _meet(lines)
        if corners is None or not _convex(corners):
            continue
        aspect = true_aspect(corners)
        score = strength - ASPECT_WEIGHT * max(0.0, abs(aspect - layout.TRIM_ASPECT) - ASPECT_FREE) - MOVE_COST * moved
        if not _border_ring(out, corners):
            out = [0.0] * 4  # not a card's border round its frame (an even ring is a holder's edge)
        score -= SKEW_WEIGHT * max(0.0, _skew(corners) - SKEW_FREE)
        score += OUT_GAIN * sum(1 for o in out if o > 0)
        if score > best_score:
            best, best_score = corners, score
    return best


def true_aspect(quad: np.ndarray) -> float:
    """Short over long side of the rectangle a clockwise quad shows, perspective undone: the camera taken as aimed
    at the quad's centre from about two of its long sides away (a phone photographing a card), the corners'
    rays met by a plane (the whiteboard construction of Zhang and He, with the focal length given rather than
    estimated: estimating it from a small copy's corners is far noisier than this guess is wrong)."""
    centre = quad.mean(axis=0)
    m1, m2, m4, m3 = (np.array([p[0] - centre[0], p[1] - centre[1], 1.0]) for p in quad)
    d2, d3 = float(np.dot(np.cross(m2, m4), m3)), float(np.dot(np.cross(m3, m4), m2))
    if abs(d2) < 1e-9 or abs(d3) < 1e-9:
        return _aspect(quad)
    n2 = float(np.dot(np.cross(m1, m4), m3)) / d2 * m2 - m1
    n3 = float(np.dot(np.cross(m1, m4), m2)) / d3 * m3 - m1
    f2 = (FOCAL_SIDES * max(float(np.linalg.norm(quad[(i + 1) % 4] - quad[i])) for i in range(4))) ** 2
    w2, h2 = n2[0] ** 2 + n2[1] ** 2 + f2 * n2[2] ** 2, n3[0] ** 2 + n3[1] ** 2 + f2 * n3[2] ** 2
    if w2 <= 0 or h2 <= 0:
        return _aspect(quad)
    ratio = float(np.sqrt(w2 / h2))
    return min(ratio, 1 / ratio)


def _border_ring(out: list[float], quad: np.ndarray) -> bool:
    """Whether outward moves to `quad` are a card's border round its frame: every side out, and either three
    about evenly (the top and the long sides) and one at least BOTTOM_RATIO times deeper (the bottom border,
    under the collector line), or all four evenly by a border's width (EVEN_BORDER of the card's short side: more
    than a sleeve's margin, less than a top-loader's)."""
    order = sorted(out)
    if order[0] > 0 and order[3] >= BOTTOM_RATIO * order[1] and order[2] <= HOLDER_RATIO * order[0]:
        return True
    short = min(float(np.linalg.norm(quad[(i + 1) % 4] - quad[i])) for i in range(4))
    even = order if order[0] > 0 else order[1:]  # the bottom border's text may hide one side's band
    width = float(np.median(even)) / max(short, 1.0)
    return len(even) >= 3 and even[0] > 0 and even[-1] <= HOLDER_RATIO * even[0] and EVEN_BORDER[0] <= width <= EVEN_BORDER[1]


def _skew(quad: np.ndarray) -> float:
    """The larger angle, in degrees, between opposite sides (a tilted card's converge a little)."""
    worst = 0.0
    for i in (0, 1):
        u, v = quad[i + 1] - quad[i], quad[i + 2] - quad[(i + 3) % 4]
        cos = abs(float(u @ v)) / (np.linalg.norm(u) * np.linalg.norm(v) + 1e-9)
        worst = max(worst, float(np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))))
    return worst


def _convex(quad: np.ndarray) -> bool:
    cross = [float(np.cross(quad[(i + 1) % 4] - quad[i], quad[(i + 2) % 4] - quad[(i + 1) % 4])) for i in range(4)]
    return all(c > 0 for c in cross) or all(c < 0 for c in cross)
