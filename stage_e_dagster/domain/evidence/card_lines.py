"""Straight lines along an outline's sides: corners from lines fitted to a contour, sides snapped to the best
supported lines near them, and how well a side is supported by strong gradient.

Shared by the outline search (`card_outline`) on the photo's small copy; every function takes points in that copy's
pixels and the gradient magnitude `card_outline.gradient_of` gives.
"""

from __future__ import annotations

import cv2
import numpy as np

# A side counts as supported where the colour gradient across it is at least this (Lab units per pixel, on the
# blurred small copy).
EDGE_STRENGTH = 10.0


def _line(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    vx, vy, x0, y0 = cv2.fitLine(points.astype(np.float32), cv2.DIST_HUBER, 0, 0.01, 0.01).reshape(-1)
    return np.array([x0, y0], np.float64), np.array([vx, vy], np.float64)


def _intersect(p: tuple[np.ndarray, np.ndarray], q: tuple[np.ndarray, np.ndarray]) -> np.ndarray | None:
    (a, u), (b, v) = p, q
    det = u[0] * -v[1] - u[1] * -v[0]
    if abs(det) < 1e-6:
        return None
    t = ((b[0] - a[0]) * -v[1] - (b[1] - a[1]) * -v[0]) / det
    return a + t * u


def refine(quad: np.ndarray, contour: np.ndarray) -> np.ndarray:
    """Corners where straight lines fitted to the contour along each side meet: true corners, not the rounded
    corners' chords."""
    pts = contour.reshape(-1, 2).astype(np.float64)
    lines = []
    for i in range(4):
        a, b = quad[i], quad[(i + 1) % 4]
        d = b - a
        length = float(np.linalg.norm(d))
        if length < 4:
            return quad
        u = d / length
        rel = pts - a
        t = rel @ u / length
        off = np.abs(rel[:, 0] * u[1] - rel[:, 1] * u[0])
        near = pts[(t > 0.12) & (t < 0.88) & (off < max(3.0, 0.02 * length))]
        lines.append(_line(near) if len(near) >= 5 else (a, u))
    corners = [_intersect(lines[i - 1], lines[i]) for i in range(4)]
    if any(c is None for c in corners):
        return quad
    out = np.array(corners, np.float64)
    return out if np.max(np.linalg.norm(out - quad, axis=1)) < 0.1 * np.linalg.norm(quad[2] - quad[0]) else quad


def snap(quad: np.ndarray, gradient: np.ndarray, reach: float = 0.05) -> np.ndarray:
    """Each side moved to the best supported straight line near it (within `reach` of its length across it, and
    three degrees of turn), the corners where those lines meet: a rough outline made exact, or a bounding box
    pulled in to the edges it stands for. Expects `gradient` widened by a 3x3 maximum."""
    h, w = gradient.shape
    lines = []
    t = np.linspace(-0.4, 0.4, 24)
    for i in range(4):
        a, b = quad[i], quad[(i + 1) % 4]
        length = float(np.linalg.norm(b - a))
        if length < 8:
            return quad
        mid = (a + b) / 2
        base = np.arctan2(*(b - a)[::-1])
        angles = base + np.radians(np.linspace(-3, 3, 7))
        offsets = np.arange(-max(3, round(reach * length)), max(3, round(reach * length)) + 1, dtype=np.float64)
        u = np.stack([np.cos(angles), np.sin(angles)], axis=1)  # (A, 2)
        n = np.stack([np.sin(angles), -np.cos(angles)], axis=1)
        pts = (mid[None, None, None, :] + offsets[None, :, None, None] * n[:, None, None, :]
               + (t * length)[None, None, :, None] * u[:, None, None, :])  # (A, O, T, 2)
        px = np.clip(np.rint(pts[..., 0]).astype(int), 0, w - 1)
        py = np.clip(np.rint(pts[..., 1]).astype(int), 0, h - 1)
        inside = (pts[..., 0] >= 0) & (pts[..., 0] < w) & (pts[..., 1] >= 0) & (pts[..., 1] < h)
        score = np.mean((gradient[py, px] >= EDGE_STRENGTH) & inside, axis=2)  # (A, O)
        score = score - 0.002 * np.abs(offsets)[None, :]  # the nearest of equally strong lines
        ai, oi = np.unravel_index(int(np.argmax(score)), score.shape)
        lines.append((mid + offsets[oi] * n[ai], u[ai]))
    corners = [_intersect(lines[i - 1], lines[i]) for i in range(4)]
    if any(c is None for c in corners):
        return quad
    out = np.array(corners, np.float64)
    return out if np.max(np.linalg.norm(out - quad, axis=1)) < 0.25 * np.linalg.norm(quad[2] - quad[0]) else quad


def side_support(gradient: np.ndarray, a: np.ndarray, b: np.ndarray, samples: int = 24) -> float:
    """Share of points along a -> b (its middle 80%) with a strong gradient within two pixels across it."""
    h, w = gradient.shape
    d = b - a
    length = float(np.linalg.norm(d))
    if length < 1:
        return 0.0
    normal = np.array([-d[1], d[0]]) / length
    t = np.linspace(0.1, 0.9, samples)[:, None]
    base = a + t * d
    best = np.zeros(samples, np.float32)
    for offset in (-2, -1, 0, 1, 2):
        p = np.rint(base + offset * normal).astype(int)
        ok = (p[:, 0] >= 0) & (p[:, 0] < w) & (p[:, 1] >= 0) & (p[:, 1] < h)
        vals = np.zeros(samples, np.float32)
        vals[ok] = gradient[p[ok, 1], p[ok, 0]]
        best = np.maximum(best, vals)
    return float(np.mean(best >= EDGE_STRENGTH))
