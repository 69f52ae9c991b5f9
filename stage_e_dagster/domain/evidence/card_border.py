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

import numpy as np

from stage_e_dagster.domain import layout

# Colour distance (Lab, 8-bit scale) within which a pixel is the border's colour.
BORDER_DELTA = 20.0
# How far out to look, as a share of the outline's long side.
REACH = 0.16
# An outline squarer than this (short over long) is too square for a card seen at up to 15 degrees.
SQUARE_ASPECT = 0.75
# The widest border, as a share of the frame's short side (the bottom border: 5 mm of a 57 mm wide frame is 9%).
BORDER_MAX = 0.12
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
    # A band wider than a border is no border (the surface, a palm under the card): it tells nothing of a card
    # run off the photo.
    bordered = ["none" if k == "edge" and offset > BORDER_MAX * min(sides) else k for k, offset in walks]
    if bordered.count("edge") >= 2 and bordered.count("frame") >= 1 and "none" not in bordered:
        return Grown(None, runs_off=True)
    if kinds.count("edge") < 4:
        return Grown(_one_side(quad, walks), runs_off=False)
    grown = _shift(quad, [offset for _, offset in walks])
    ratio = _aspect(grown) / _aspect(quad)
    if not 0.86 <= ratio <= 0.985:
        return Grown(None, runs_off=False)
    return Grown(grown, runs_off=False)
