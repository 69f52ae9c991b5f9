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
cloth fold's or painted playmat's shapes are not. Fitting and snapping the sides' lines and measuring their
support live in `card_lines`.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
from PIL import Image

from stage_e_dagster.domain.evidence.card_lines import refine, side_support, snap
from stage_e_dagster.domain.evidence.card_settle import texture_of

# Outlines smaller than this share of the photo are not looked at.
MIN_AREA = 0.008
# Colour distance (Lab, 8-bit scale) within which a pixel looks like the photo's surface.
SURFACE_DELTA = 28.0
# An outline side within this many small-copy pixels of the photo's frame lies on the frame (the card runs off).
FRAME_SLACK = 4.0
# Two outlines side by side are parts of one when the outline they make together is at most this times their areas.
JOINED_FILL = 1.25
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


def joined(a: Outline, b: Outline, w: int, h: int) -> Outline | None:
    """The four-sided outline two outlines side by side make together (on a w x h copy), when they fill most of it
    (a card's outline split in two by a line across it, a glare band's edge or the art box's bottom), else None."""
    hull = cv2.convexHull(np.concatenate([a.polygon, b.polygon]).astype(np.float32))
    quad = cv2.approxPolyDP(hull, 0.02 * cv2.arcLength(hull, True), True).reshape(-1, 2).astype(np.float64)
    if len(quad) != 4:
        return None
    area = float(cv2.contourArea(quad.astype(np.float32))) / (w * h)
    if area > JOINED_FILL * (a.area + b.area):
        return None
    return Outline(_clockwise(quad), area, min(a.support, b.support), min(a.weakest, b.weakest), (False,) * 4,
                   _aspect(quad), max(a.square, b.square))


def enlarged(image: Image.Image, long_side: int) -> Image.Image:
    """`image` resized up to `long_side` on its long side (bicubic): a small photo seen at the finder's size."""
    scale = long_side / max(image.size)
    return image.resize((round(image.width * scale), round(image.height * scale)), Image.Resampling.BICUBIC)


def reduced_copy(image: Image.Image, long_side: int, mode: str) -> np.ndarray:
    """`image` in `mode` as an array about `long_side` long: reduced by a whole factor, then resized down by area."""
    factor = max(image.size) // long_side
    reduced = image.reduce(factor) if factor >= 2 else image
    arr = np.asarray(reduced.convert(mode))
    scale = long_side / max(arr.shape[:2])
    if scale < 0.95:
        arr = cv2.resize(arr, (round(arr.shape[1] * scale), round(arr.shape[0] * scale)), interpolation=cv2.INTER_AREA)
    return arr
