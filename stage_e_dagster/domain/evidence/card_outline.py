"""Candidate card outlines in a photo: closed straight-sided shapes whose sides lie on strong edges.

Works on a small copy of the photo (about 640 px on the long side). Outlines come from two binary maps, so a
card that one misses the other may catch: the colour edges (Canny on each Lab channel, closed), and the pixels
unlike the photo's own rim (the surface around the card). The image's frame is drawn into the edge map so that a
card running off the photo still closes into a shape, one of whose sides lies on the frame: that is how a cut-off
card is told from a whole one.

Each outline is scored by its edge support: the share of points along each side (away from the rounded corners)
where the gradient across the side is strong, on the Lab channels and, when `prepare` is given a grey copy at
twice the size, on a texture channel (a printed card is smooth, a cloth's weave or a wood's grain is not, so a
black card on a black cloth still shows its edge there). A card's four sides are straight, strong edges; a wood grain's,
cloth fold's or painted playmat's shapes are not.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from stage_e_dagster.domain.evidence.card_settle import texture_of

# A side counts as supported where the colour gradient across it is at least this (Lab units per pixel, on the
# blurred small copy).
EDGE_STRENGTH = 10.0
# Outlines smaller than this share of the photo are not looked at.
MIN_AREA = 0.008
# Colour distance (Lab, 8-bit scale) within which a pixel looks like the photo's surface.
SURFACE_DELTA = 28.0
# An outline side within this many small-copy pixels of the photo's frame lies on the frame (the card runs off).
FRAME_SLACK = 4.0
# The estimated short-over-long side ratio a card seen at up to ~20 degrees may show.
ASPECT_RANGE = (0.56, 0.92)


@dataclass(frozen=True)
class Outline:
    """A candidate outline on the small copy: its polygon, area share, edge support and where it meets the frame."""

    polygon: np.ndarray  # (n, 2) float, clockwise on screen (y down), n >= 4
    area: float  # share of the photo
    support: float  # mean edge support of the sides not on the frame, 0..1
    weakest: float  # the least supported side not on the frame
    on_frame: tuple[bool, ...]  # per side (polygon[i] -> polygon[i + 1]): lies on the photo's frame
    aspect: float  # estimated short/long ratio (quads only; 0 otherwise)
    square: float  # the largest corner's deviation from 90 degrees among inside corners

    @property
    def whole(self) -> bool:
        return len(self.polygon) == 4 and not any(self.on_frame)

    @property
    def card_like(self) -> bool:
        """Four strong straight sides in a card's proportions, near-right corners."""
        return (self.whole and ASPECT_RANGE[0] <= self.aspect <= ASPECT_RANGE[1] and self.square <= 25
                and self.support >= 0.72 and self.weakest >= 0.45)

    def contains(self, other: Outline) -> bool:
        """Whether `other`'s centre lies inside this outline and `other` is smaller."""
        centre = other.polygon.mean(axis=0)
        inside = cv2.pointPolygonTest(self.polygon.astype(np.float32), (float(centre[0]), float(centre[1])), False)
        return inside > 0 and other.area < self.area


def gradient_of(lab: np.ndarray, texture: np.ndarray | None = None) -> np.ndarray:
    """The strongest gradient magnitude of the three Lab channels and the texture channel, per pixel (float32)."""
    best = None
    channels = list(cv2.split(lab)) + ([texture] if texture is not None else [])
    for channel in channels:
        gx = cv2.Sobel(channel, cv2.CV_32F, 1, 0, ksize=3)
        gy = cv2.Sobel(channel, cv2.CV_32F, 0, 1, ksize=3)
        magnitude = cv2.magnitude(gx, gy) / 4.0
        best = magnitude if best is None else np.maximum(best, magnitude)
    assert best is not None
    return best


def _edge_map(lab: np.ndarray, faint: bool = False, texture: np.ndarray | None = None) -> np.ndarray:
    edges = None
    levels = ((12, 30), (8, 20), (8, 20), (16, 40)) if faint else ((30, 80), (16, 40), (16, 40), (30, 80))
    channels = list(cv2.split(lab))
    if texture is not None:
        channels.append(np.clip(texture, 0, 255).astype(np.uint8))
    for channel, (lo, hi) in zip(channels, levels[:len(channels)], strict=True):
        found = cv2.Canny(channel, lo, hi, L2gradient=True)
        edges = found if edges is None else cv2.bitwise_or(edges, found)
    assert edges is not None
    return cv2.morphologyEx(edges, cv2.MORPH_CLOSE, np.ones((3, 3), np.uint8), iterations=2)


def _framed(edges: np.ndarray) -> np.ndarray:
    framed = edges.copy()
    h, w = framed.shape
    cv2.rectangle(framed, (0, 0), (w - 1, h - 1), 255, 1)
    return framed


def rim_colours(lab: np.ndarray) -> np.ndarray:
    """Four colours that stand for the photo's rim (the surface the card lies on), by k-means."""
    h, w = lab.shape[:2]
    band = max(3, round(0.02 * min(h, w)))
    rim = np.concatenate([lab[:band].reshape(-1, 3), lab[-band:].reshape(-1, 3), lab[:, :band].reshape(-1, 3),
                          lab[:, -band:].reshape(-1, 3)]).astype(np.float32)
    criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 10, 1.0)
    cv2.setRNGSeed(7)  # k-means starts from random centres: the same photo gives the same answer
    _, _, centres = cv2.kmeans(rim, 4, None, criteria, 1, cv2.KMEANS_PP_CENTERS)
    return centres


def surface_distance(colours: np.ndarray, rim: np.ndarray) -> np.ndarray:
    """Each colour's (n, 3) Lab distance to the nearest of the rim's colours."""
    return np.min(np.linalg.norm(colours[:, None, :].astype(np.float32) - rim[None, :, :], axis=2), axis=1)


def _unlike_rim(lab: np.ndarray, rim: np.ndarray) -> np.ndarray:
    """Pixels far in colour from every part of the photo's rim (the surface), cleaned."""
    h, w = lab.shape[:2]
    distance = surface_distance(lab.reshape(-1, 3), rim).reshape(h, w)
    mask = (distance > SURFACE_DELTA).astype(np.uint8) * 255
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((5, 5), np.uint8))
    return cv2.morphologyEx(mask, cv2.MORPH_CLOSE, np.ones((7, 7), np.uint8))


def surface_around(polygon: np.ndarray, lab: np.ndarray, rim: np.ndarray) -> float:
    """How much a ring just outside a clockwise outline (3-7% of its size out) looks like the surface: the share
    like the photo's rim, or like the ring further out (11-15%) at the same places, whichever is higher. High round
    a whole card (or its holder), on a plain or a busy surface alike; low round a part of a card (its frame, its
    art box), where the border or the frame lies outside."""
    h, w = lab.shape[:2]
    n = len(polygon)
    size = float(np.sqrt(abs(cv2.contourArea(polygon.astype(np.float32)))))
    t = np.linspace(0.05, 0.95, 16)[:, None]
    near, far = [], []
    for i in range(n):
        a, b = polygon[i], polygon[(i + 1) % n]
        d = b - a
        normal = np.array([d[1], -d[0]]) / (np.linalg.norm(d) + 1e-9)
        for out in (0.03, 0.05, 0.07):
            near.append(a + t * d + out * size * normal)
            far.append(a + t * d + (out + 0.08) * size * normal)
    pn, pf = np.concatenate(near), np.concatenate(far)
    inside = (np.all(pn >= 0, axis=1) & (pn[:, 0] <= w - 1) & (pn[:, 1] <= h - 1)
              & np.all(pf >= 0, axis=1) & (pf[:, 0] <= w - 1) & (pf[:, 1] <= h - 1))
    if inside.sum() < 8:
        return 0.0
    pn, pf = np.rint(pn[inside]).astype(int), np.rint(pf[inside]).astype(int)
    cn, cf = lab[pn[:, 1], pn[:, 0]].astype(np.float32), lab[pf[:, 1], pf[:, 0]].astype(np.float32)
    like_rim = float(np.mean(surface_distance(cn, rim) <= SURFACE_DELTA))
    like_beyond = float(np.mean(np.linalg.norm(cn - cf, axis=1) <= SURFACE_DELTA))
    return max(like_rim, like_beyond)


def _polygon(contour: np.ndarray) -> np.ndarray | None:
    hull = cv2.convexHull(contour)
    perimeter = cv2.arcLength(hull, True)
    for eps in (0.012, 0.02, 0.03, 0.045):
        approx = cv2.approxPolyDP(hull, eps * perimeter, True).reshape(-1, 2).astype(np.float64)
        if len(approx) <= 6:
            return approx if len(approx) >= 4 else None
    return None


def _clockwise(poly: np.ndarray) -> np.ndarray:
    # On screen (y down) a positive shoelace sum is clockwise.
    x, y = poly[:, 0], poly[:, 1]
    signed = float(np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y))
    return poly if signed > 0 else poly[::-1].copy()


def _on_frame(a: np.ndarray, b: np.ndarray, w: int, h: int) -> bool:
    for axis, limit in ((0, 0.0), (0, w - 1.0), (1, 0.0), (1, h - 1.0)):
        if abs(a[axis] - limit) <= FRAME_SLACK and abs(b[axis] - limit) <= FRAME_SLACK:
            return True
    return False


def _on_frame_any(poly: np.ndarray, w: int, h: int) -> bool:
    return bool(np.any(poly < FRAME_SLACK) or np.any(poly[:, 0] > w - 1 - FRAME_SLACK)
                or np.any(poly[:, 1] > h - 1 - FRAME_SLACK))


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


def _aspect(quad: np.ndarray) -> float:
    s = [float(np.linalg.norm(quad[(i + 1) % 4] - quad[i])) for i in range(4)]
    a, b = (s[0] + s[2]) / 2, (s[1] + s[3]) / 2
    return min(a, b) / max(a, b) if max(a, b) > 0 else 0.0


def _squareness(poly: np.ndarray, on_frame: tuple[bool, ...]) -> float:
    """The largest deviation from 90 degrees among corners between two sides off the frame."""
    n = len(poly)
    worst = 0.0
    for i in range(n):
        if on_frame[i - 1] or on_frame[i]:
            continue
        u, v = poly[i - 1] - poly[i], poly[(i + 1) % n] - poly[i]
        cos = float(u @ v / (np.linalg.norm(u) * np.linalg.norm(v) + 1e-9))
        worst = max(worst, abs(np.degrees(np.arccos(np.clip(cos, -1, 1))) - 90))
    return worst


def outline_of(contour: np.ndarray, gradient: np.ndarray, wide: np.ndarray, boxed: bool = False) -> Outline | None:
    """The outline a contour makes, or None when it is too small or not a 4-6 sided convex shape. `boxed`: a
    shape that is not one (a card with a lobe of the surface grown onto it) is tried as its tightest rotated box,
    pulled in to its edges."""
    h, w = gradient.shape
    hull_area = cv2.contourArea(cv2.convexHull(contour))
    if hull_area < MIN_AREA * w * h or hull_area > 0.97 * w * h:
        return None
    poly = _polygon(contour) if cv2.contourArea(contour) >= 0.8 * hull_area else None
    if poly is not None:
        poly = _clockwise(poly)
        on_frame = tuple(_on_frame(poly[i], poly[(i + 1) % len(poly)], w, h) for i in range(len(poly)))
        if len(poly) > 4 and not any(on_frame):
            poly = None  # a whole card is four-sided
    if poly is None:
        if not boxed:
            return None
        box = _clockwise(cv2.boxPoints(cv2.minAreaRect(contour)).astype(np.float64))
        poly = _clockwise(snap(box, wide, reach=0.2))
        if _on_frame_any(poly, w, h):
            return None
    n = len(poly)
    on_frame = tuple(_on_frame(poly[i], poly[(i + 1) % n], w, h) for i in range(n))
    if n == 4 and not any(on_frame):
        poly = _clockwise(refine(poly, contour))
    supports = [side_support(gradient, poly[i], poly[(i + 1) % n]) for i in range(n) if not on_frame[i]]
    if not supports:
        return None
    return Outline(poly, float(cv2.contourArea(poly.astype(np.float32))) / (w * h), float(np.mean(supports)),
                   float(min(supports)), on_frame, _aspect(poly) if n == 4 else 0.0, _squareness(poly, on_frame))


def _repaired(contour: np.ndarray, shape: tuple[int, int]) -> list[np.ndarray]:
    """The contour's region filled, its nicks closed and its thin spurs (a crossing edge, a glare streak, a
    finger's outline) opened away: the solid shapes left."""
    h, w = shape
    x, y, bw, bh = cv2.boundingRect(contour)
    pad = 8
    x0, y0, x1, y1 = max(0, x - pad), max(0, y - pad), min(w, x + bw + pad), min(h, y + bh + pad)
    mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.drawContours(mask, [contour - np.array([x0, y0])], -1, 255, cv2.FILLED)
    mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (7, 7)))
    size = max(5, round(0.025 * min(h, w))) | 1
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (size, size)))
    found, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    return [c + np.array([x0, y0]) for c in found if cv2.contourArea(c) >= MIN_AREA * w * h]


@dataclass(frozen=True)
class Prepared:
    """What the search and its checks read: the blurred Lab copy, its gradient magnitude, the rim's colours."""

    lab: np.ndarray
    gradient: np.ndarray
    rim: np.ndarray
    texture: np.ndarray | None = None


def prepare(small_rgb: np.ndarray, grey: np.ndarray | None = None) -> Prepared:
    """The small copy's blurred Lab, its gradient and the rim's colours; with `grey` (a grey copy about twice as
    large), the texture channel too."""
    lab = cv2.cvtColor(cv2.GaussianBlur(small_rgb, (5, 5), 0), cv2.COLOR_RGB2LAB)
    texture = texture_of(grey, lab.shape[:2]) if grey is not None else None
    return Prepared(lab, gradient_of(lab, texture), rim_colours(lab), texture)


def outlines(prepared: Prepared) -> list[Outline]:
    """Every candidate outline in a photo's small copy (`prepare`), duplicates merged (the better supported kept)."""
    lab, gradient = prepared.lab, prepared.gradient
    wide = cv2.dilate(gradient, np.ones((3, 3), np.uint8))
    h, w = gradient.shape
    found: list[Outline] = []
    edges = _edge_map(lab)
    faint = _edge_map(lab, faint=True)
    # The hull of each connected set of edges: a card's outline, frame and text make one set, and a card cut off
    # by the photo's frame leaves one whose hull closes along that frame.
    contours, _ = cv2.findContours(edges, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    for contour in contours:
        _, _, bw, bh = cv2.boundingRect(contour)
        if bw * bh >= MIN_AREA * w * h:
            outline = outline_of(cv2.convexHull(contour), gradient, wide)
            if outline is not None:
                found.append(outline)
    for mask in (_framed(edges), _framed(faint), _unlike_rim(lab, prepared.rim)):
        contours, _ = cv2.findContours(mask, cv2.RETR_LIST, cv2.CHAIN_APPROX_SIMPLE)
        for contour in contours:
            _, _, bw, bh = cv2.boundingRect(contour)
            if bw * bh < MIN_AREA * w * h or (bw >= w - 2 and bh >= h - 2):
                continue
            outline = outline_of(contour, gradient, wide)
            if outline is not None and outline.support >= 0.5:
                found.append(outline)
                continue
            for part in _repaired(contour, (h, w)):
                outline = outline_of(part, gradient, wide, boxed=True)
                if outline is not None:
                    found.append(outline)
    return _merge(found)


def _merge(found: list[Outline]) -> list[Outline]:
    found.sort(key=lambda o: (-o.support, -o.area))
    kept: list[Outline] = []
    for outline in found:
        if not any(_same(outline, k) for k in kept):
            kept.append(outline)
    return kept


def _same(a: Outline, b: Outline) -> bool:
    if len(a.polygon) != len(b.polygon) or abs(a.area - b.area) > 0.06 * max(a.area, b.area):
        return False
    size = float(np.sqrt(abs(cv2.contourArea(a.polygon.astype(np.float32)))))
    return bool(np.linalg.norm(a.polygon.mean(axis=0) - b.polygon.mean(axis=0)) < 0.04 * size)
