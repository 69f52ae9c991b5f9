"""Find the card in an uploaded image: a scan is already the card; a photo holds one, to be cut out and straightened.

`find_card(image)` answers with a `FoundCard` (the card alone, upright, and its four corners in the image) or a
`CardNotFound` naming why no single whole card could be isolated. No guess: a photo of several cards, a card run
off the frame or a card too small in it is a named skip.

- **Already a card.** An image in a card's proportions (trimmed or with bleed, `geometry.classify_bleed`) is a scan
  or a render: it comes back as it is, with the image's own corners, for the cost of one division. So is an image
  in other proportions whose best outline is the image's own edge.
- **A photo.** Outlines are searched on a copy about 640 px long (`card_outline`); the card is the best supported
  four-sided outline in a card's proportions that lies on the surface; inside a sleeve or top-loader the card's
  own edge wins when it is in truer proportions than the holder's. Its sides are then settled on the card's own
  edges (`card_settle`: a frame inside a dark border grows out to the card's faint edge, seen in colour or in
  texture), and a card whose settled outline, perspective undone, is not in a card's proportions is a part of a
  card: a skip, never a guess. Several cards are judged by whole card-shaped outlines apart from each other, not
  by parts of one card. The full-resolution image is warped to a portrait card at the size the photo shows it
  (capped), in exactly the trimmed card's proportions, and turned upright (`card_straighten`), its corners moved
  to where its own frame lines put its edges (`card_layout`). A card whose straightened face does not show nearly
  all its frame lines where they belong was a part of a card, a guess or an outline off the card: a skip, unless
  it is the art box of a card that lies whole round it, another outline over the same card shows them, or it lay
  on the card's frame and the card round it shows them; and a card-like outline apart from the card whose face
  shows a card's frame lines is a second card (`card_faces`).

Corners are normalised to the input image (0..1), in the order the card reads: top-left, top-right, bottom-right,
bottom-left.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import cv2
import numpy as np
from PIL import Image

from stage_e_dagster.domain import layout
from stage_e_dagster.domain.evidence.card_border import grow
from stage_e_dagster.domain.evidence.card_faces import (
    ART_BOX_AREA,
    LAYOUT_MIN,
    another_outline,
    around_art_box,
    art_box_runs_off,
    edges_seen,
    edges_seen_inside,
    round_frame,
    second_card,
)
from stage_e_dagster.domain.evidence.card_outline import (
    SURFACE_DELTA,
    Outline,
    Prepared,
    joined,
    outlines,
    prepare,
    reduced_copy,
    surface_around,
    surface_distance,
)
from stage_e_dagster.domain.evidence.card_settle import Directional, settle, true_aspect
from stage_e_dagster.domain.evidence.card_straighten import portrait_order, straighten
from stage_e_dagster.domain.evidence.card_straighten import warp_card as warp_card  # (where callers look for it)
from stage_e_dagster.domain.evidence.geometry import classify_bleed
from stage_e_dagster.domain.evidence.load import LoadedScan
from stage_e_dagster.domain.evidence.model import EvidenceSkip

# One thread: the finder runs inside OCR workers, one per core.
cv2.setNumThreads(1)

SCAN = "scan"
PHOTO = "photo"
SEVERAL_CARDS = "photo-several-cards"
CARD_CUT_OFF = "photo-card-cut-off"
CARD_TOO_SMALL = "photo-card-too-small"
NO_CARD = "photo-card-not-found"
SKIP_REASONS = (SEVERAL_CARDS, CARD_CUT_OFF, CARD_TOO_SMALL, NO_CARD)

# The long side of the copy outlines are searched on.
WORK_LONG_SIDE = 640
# A card under this share of the photo's area is too small to read.
MIN_CARD_AREA = 0.10
# A second card-like outline at least this share of the best one's area makes a photo of several cards.
SECOND_CARD_AREA = 0.4
# A second card smaller than this share of the photo is not counted (a mana symbol's box is card-like too).
MIN_RIVAL_AREA = 0.03
# A card-like outline beside the card, apart from it, at least this share of its area: a part of a second card.
PART_OF_ANOTHER = 0.15
# A holder's area is at most this many times its card's (a top-loader's is 1.4); a card seen in one is within
# HELD_ASPECT of a card's proportions.
HOLDER_AREA, HELD_ASPECT = 1.5, 0.015
# The found outline, settled on its edges and perspective undone, must be within this of a card's proportions.
WHOLE_ASPECT = 0.035
# A part beside the card counts only apart from the card grown by this (its holder), and when settled on its own
# edges it takes a card's proportions within BESIDE_ASPECT.
HOLDER_REACH, BESIDE_ASPECT = 1.12, 0.025
# Another outline over the chosen one, at least this share of its area, is read for the card (`another_outline`).
OTHER_AREA = 0.5
# A card cut off by the frame leaves straight sides inside the photo: their mean support is at least this (a
# palm's or a cloth's curved edge, cut into a polygon, falls short of it).
CUT_SUPPORT = 0.85
# An outline whose inside has the rim's colours over at least this share is a patch of the surface, never a
# second card.
SURFACE_INSIDE = 0.5
# A card-like outline is a whole card when at least this share of a ring just outside it looks like the surface.
ON_SURFACE = 0.4
# When none does, the largest this many card-like outlines inside no other are read for their frame lines.
PROOF_LOOKS = 2
# A part of a card (and no whole card) this close to the photo's frame (share of its short side): a card cut off.
NEAR_FRAME = 0.12
# An image within this (relative) of a trimmed card's proportions, in which no outline is found, is taken as a
# loosely cropped scan rather than skipped. It stops short of a phone's 3:4 (0.75).
LOOSE_ASPECT = 0.04
# Corners within this share of the image's sides of the image's own corners: the card's edges are the image's.
EDGE_SLACK = 0.03

Corner = tuple[float, float]
Corners = tuple[Corner, Corner, Corner, Corner]


@dataclass(frozen=True)
class FoundCard:
    """The card alone, upright and portrait, and where it is in the image it was found in.

    `kind` is "scan" when the image already was the card (then `image` is the input itself, unchanged) or "photo".
    `area` is the card's share of the input image. `orientation_margin` says how sure "this way up" is (photos
    only: a scan is taken the way it was uploaded); a reader that cannot read an unsure card may try `flipped()`.
    """

    image: Image.Image
    corners: Corners
    kind: str
    area: float = 1.0
    orientation_margin: float | None = None
    detail: dict[str, Any] = field(default_factory=dict)

    def flipped(self) -> FoundCard:
        """The same card turned half a turn (its corners renamed to match)."""
        c = self.corners
        return replace(self, image=self.image.rotate(180), corners=(c[2], c[3], c[0], c[1]))

    def loaded(self, original: LoadedScan) -> LoadedScan:
        """The card as the extractors take a decoded scan: `original` itself for a scan; for a photo, the
        straightened card, its size in the original file's pixels (so resolution and proportions read true)."""
        if self.kind == SCAN:
            return original
        scale = original.scale or 1.0
        return LoadedScan(image=self.image, width=max(1, round(self.image.width / scale)),
                          height=max(1, round(self.image.height / scale)), format=original.format)


@dataclass(frozen=True)
class CardNotFound:
    """Why no single whole card could be isolated: one of SKIP_REASONS, with what was seen."""

    reason: str
    detail: dict[str, Any] = field(default_factory=dict)

    def as_skip(self) -> EvidenceSkip:
        return EvidenceSkip(reason=self.reason, detail=dict(self.detail))


def image_corners() -> Corners:
    return ((0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0))


def is_card_shaped(width: int, height: int) -> bool:
    """Whether an image has a card's proportions, trimmed or with bleed (the cheap test that passes scans)."""
    return classify_bleed(width, height).bleed_class != "ambiguous"


def find_card(image: Image.Image) -> FoundCard | CardNotFound:
    """The card in `image` (RGB), or why no single whole card can be isolated (see the module's docstring)."""
    width, height = image.size
    if is_card_shaped(width, height):
        return FoundCard(image, image_corners(), SCAN)
    small = reduced_copy(image, WORK_LONG_SIDE, "RGB")  # the outlines' working copy, and its scale against `image`
    factor = small.shape[1] / image.width
    prepared = prepare(small, reduced_copy(image, 2 * WORK_LONG_SIDE, "L"))  # (for the texture channel)
    channels = list(cv2.split(prepared.lab)) + ([prepared.texture] if prepared.texture is not None else [])
    colours = np.dstack(channels).astype(np.float32) if prepared.texture is not None else None
    directional = Directional.of(channels)
    found = outlines(prepared)
    sh, sw = small.shape[:2]
    def proved(q: np.ndarray) -> bool:
        return _proved(image, settle(q, directional, colours) / factor, (sw, sh), factor)
    chosen = choose(found, prepared, lambda q: settle(q, directional, colours), proved)
    if isinstance(chosen, CardNotFound):
        if chosen.reason == NO_CARD and _loosely_card_shaped(width, height):
            return FoundCard(image, image_corners(), SCAN, detail={"loose": True})
        return chosen
    picked, quad = chosen, chosen.polygon
    grown = grow(quad, prepared.lab, prepared.gradient)
    if grown.runs_off and not proved(quad):  # (a holder's band or a shadow grown on to the frame, round a card
        return CardNotFound(CARD_CUT_OFF, {"area": round(chosen.area, 4), "border": "runs off the photo"})
    if grown.quad is not None and not grown.runs_off:  # whose own face shows its lines: the card is whole)
        quad = grown.quad
    settled = settle(quad, directional, colours)
    if not (np.any(settled < 0) or np.any(settled[:, 0] > sw) or np.any(settled[:, 1] > sh)):
        quad = settled  # (a side settled past the photo's frame found an edge of the surface, not the card's)
    if np.any(quad < 0) or np.any(quad[:, 0] > sw) or np.any(quad[:, 1] > sh):
        return CardNotFound(CARD_CUT_OFF, {"area": round(chosen.area, 4), "border": "grown past the photo"})
    chosen = replace(chosen, area=float(abs(cv2.contourArea(quad.astype(np.float32)))) / (sw * sh))
    aspect = true_aspect(quad)
    if abs(aspect - layout.TRIM_ASPECT) > WHOLE_ASPECT:  # a part of a card, no whole one: no guess
        near = _near_frame(replace(chosen, polygon=quad), (sh, sw))
        return CardNotFound(CARD_CUT_OFF if near else NO_CARD, {"area": round(chosen.area, 4),
                                                               "aspect": round(aspect, 3)})
    quad = portrait_order(quad)
    if _is_whole_image(quad, sw, sh):
        return FoundCard(image, image_corners(), SCAN, detail={"edges": "image"})
    full_quad = quad / factor
    area = chosen.area
    if area < MIN_CARD_AREA and area / ART_BOX_AREA < MIN_CARD_AREA:
        return CardNotFound(CARD_TOO_SMALL, {"area": round(area, 4), "min_area": MIN_CARD_AREA})
    card, margin, quad_full, lines = straighten(image, full_quad)
    if lines < LAYOUT_MIN:  # the outline is no whole card's: a part of one (its art box?), or a guess
        held = around_art_box(image, full_quad, lambda q: edges_seen(q * factor, prepared.gradient))
        if held is None:  # another outline over the same card (its holder, the card in it) whose face shows them
            others = [o for o in found if o.card_like and o is not picked and o.area >= OTHER_AREA * picked.area
                      and _overlaps(o, picked)]
            held = another_outline(image, [o.polygon for o in sorted(others, key=lambda o: o.area)],
                                   lambda q: settle(q, directional, colours) / factor)
        if held is None:  # the outline lay on the card's frame, inside a border the colour of the surface
            held = round_frame(image, full_quad)
        if held is None:
            if art_box_runs_off(full_quad, (width, height), lambda q: edges_seen_inside(
                    q * factor, prepared.gradient)):  # the art box of a card cut off by the frame
                return CardNotFound(CARD_CUT_OFF, {"area": round(area, 4), "layout": round(lines, 3),
                                                   "art_box": "its card runs off the photo"})
            if area < MIN_CARD_AREA:
                return CardNotFound(CARD_TOO_SMALL, {"area": round(area, 4), "min_area": MIN_CARD_AREA})
            return CardNotFound(NO_CARD, {"area": round(area, 4), "layout": round(lines, 3)})
        card, margin, quad_full, lines = held
        area = float(abs(cv2.contourArea(quad_full.astype(np.float32)))) / (width * height)
    if area < MIN_CARD_AREA:
        return CardNotFound(CARD_TOO_SMALL, {"area": round(area, 4), "min_area": MIN_CARD_AREA})
    second = second_card(image, found, quad_full * factor, factor, HOLDER_REACH, MIN_RIVAL_AREA)
    if second is not None:
        return CardNotFound(SEVERAL_CARDS, {"cards": 2, "area": round(area, 4), "second_area": round(second, 4)})
    corners = tuple((float(x) / width, float(y) / height) for x, y in quad_full)
    detail = {"support": round(chosen.support, 3), "aspect": round(chosen.aspect, 3), "layout": round(lines, 3)}
    return FoundCard(card, corners, PHOTO, area=round(area, 4),  # type: ignore[arg-type]
                     orientation_margin=round(margin, 3), detail=detail)


def choose(found: list[Outline], prepared: Prepared, settler: Callable[[np.ndarray], np.ndarray] | None = None,
           proved: Callable[[np.ndarray], bool] | None = None) -> Outline | CardNotFound:
    """The card among the outlines, or the reason there is no single whole one.

    A card (or its holder) lies on the surface: a card-like outline ringed by anything else, or lying inside another
    card-like outline or a card cut off by the frame, is a part of a card (its frame, its art box, a symbol). When
    no card-like outline lies on the surface, one inside no other card-like one (a cut-off shape may hold it) whose
    own printing `proved` it a whole card (its face, straightened, shows its frame lines) is the card: a top-loader
    run off the photo rings it with plastic, not the surface, and no outline of the holder closes; a shadow's edge
    cut by the frame makes a cut-off shape round a whole card. Two card-like outlines side by side that together
    make a card's shape proved by its frame lines are parts of one card (a line across it split its outline)."""
    h, w = prepared.lab.shape[:2]  # (an outline with a corner beyond the photo's frame is no whole card)
    card_like = [o for o in found if o.card_like and _within(o.polygon, w, h)]
    cut = [o for o in found if _cut_card_like(o)]
    outer = [c for c in card_like if not any(o.contains(c) for o in card_like)
             and not any(o.contains(c) and not _held(c, o) for o in cut)]
    top = [c for c in outer if surface_around(c.polygon, prepared.lab, prepared.rim) >= ON_SURFACE]
    if not top and proved is not None:  # (a holder run off the photo, or a shadow's edge cut by it, round a card)
        looks = outer + [c for c in card_like if all(c is not o for o in outer)
                         and not any(o.contains(c) for o in card_like)]
        top = [c for c in sorted(looks, key=lambda o: -o.area)[:PROOF_LOOKS] if proved(c.polygon)][:1]
    if not top:
        return _no_whole_card(found, card_like, cut, prepared.lab.shape[:2])
    best = max(top, key=lambda o: o.area)
    # A card's frame inside a card cut off by the frame, larger than any whole card: the photo's card is cut off.
    parts = [c for c in card_like if any(o.contains(c) and not _held(c, o) for o in cut)
             and c is not best and not best.contains(c)]
    if parts and max(o.area for o in parts) > best.area:
        return CardNotFound(CARD_CUT_OFF, {"area": round(max(o.area for o in cut), 4),
                                           "part_area": round(max(o.area for o in parts), 4)})
    # A second card lies apart from the first (two outlines that overlap are parts of one card) and is a whole
    # card's shape once its sides are settled on its own edges.
    rivals = [o for o in top if o is not best and o.area >= SECOND_CARD_AREA * best.area and o.support >= 0.8
              and o.area >= MIN_RIVAL_AREA and not _overlaps(o, best)]
    if settler is not None:
        rivals = [o for o in rivals if abs(true_aspect(settler(o.polygon)) - layout.TRIM_ASPECT) <= BESIDE_ASPECT]
    if len(rivals) == 1 and proved is not None:  # two parts of one card (a line across it split its outline)
        whole = joined(best, rivals[0], w, h)
        if whole is not None and proved(whole.polygon):
            best, rivals = whole, []
    if rivals:
        areas = sorted(round(o.area, 4) for o in (best, *rivals))
        return CardNotFound(SEVERAL_CARDS, {"cards": len(areas), "areas": areas})
    # A part of another card (its frame, its art box) beside the card: a second card whose own edge was not seen.
    beside = [o for o in card_like if o.area >= PART_OF_ANOTHER * best.area and not best.contains(o)
              and not o.contains(best) and not _overlaps(o, best, HOLDER_REACH) and not _surface_inside(o, prepared)]
    if settler is not None:  # only a whole card's shape counts, once its sides are settled on its own edges
        beside = [o for o in beside if abs(true_aspect(settler(o.polygon)) - layout.TRIM_ASPECT) <= BESIDE_ASPECT]
    if beside:
        return CardNotFound(SEVERAL_CARDS, {"cards": 2, "area": round(best.area, 4),
                                            "part_area": round(max(o.area for o in beside), 4)})
    return _innermost_card(best, card_like)


def _proved(image: Image.Image, quad: np.ndarray, small: tuple[int, int], factor: float) -> bool:
    """Whether an outline (settled, full-image pixels) is a whole card by its own printing: it lies inside the
    photo and its face, straightened, shows nearly all its frame lines (LAYOUT_MIN) without moving its corners off
    it (a frame or an art box, fitted out to a card running off the photo, is no card seen whole)."""
    if not _within(quad * factor, *small):
        return False
    _, _, moved, lines = straighten(image, portrait_order(quad))
    return lines >= LAYOUT_MIN and _within(moved * factor, *small)


def _held(card: Outline, outer: Outline) -> bool:
    """Whether `outer` is a holder round `card` (a sleeve or top-loader, perhaps run off the photo while the card
    is whole): at most HOLDER_AREA times the card's area, the card in exactly a card's proportions."""
    return (outer.area <= HOLDER_AREA * card.area
            and abs(true_aspect(card.polygon) - layout.TRIM_ASPECT) <= HELD_ASPECT)


def _surface_inside(o: Outline, prepared: Prepared) -> bool:
    """Whether most of an outline's inside (away from its sides) has the colours of the photo's rim: a patch of the
    surface between a wood's planks or a cloth's folds, not a second card (whose art and text box are printed)."""
    centre = o.polygon.mean(axis=0)
    inner = centre + (o.polygon - centre) * 0.8
    h, w = prepared.lab.shape[:2]
    x0, y0 = np.maximum(np.floor(inner.min(axis=0)).astype(int), 0)
    x1, y1 = np.minimum(np.ceil(inner.max(axis=0)).astype(int) + 1, (w, h))
    if x1 <= x0 or y1 <= y0:
        return False
    mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.fillConvexPoly(mask, np.rint(inner - (x0, y0)).astype(np.int32), 1)
    pixels = prepared.lab[y0:y1, x0:x1][mask > 0][::3]
    if len(pixels) < 20:
        return False
    return float(np.mean(surface_distance(pixels, prepared.rim) <= SURFACE_DELTA)) >= SURFACE_INSIDE


def _within(polygon: np.ndarray, w: int, h: int) -> bool:
    """Whether every corner lies inside the photo (a pixel's slack)."""
    return bool(np.all(polygon >= -1.0) and np.all(polygon[:, 0] <= w) and np.all(polygon[:, 1] <= h))


def _overlaps(a: Outline, b: Outline, grow_b: float = 1.0) -> bool:
    """Whether two outlines overlap, `b` first grown by `grow_b` about its centre."""
    centre = b.polygon.mean(axis=0)
    grown = centre + (b.polygon - centre) * grow_b
    inter, _ = cv2.intersectConvexConvex(a.polygon.astype(np.float32), grown.astype(np.float32))
    return inter > 0


def _no_whole_card(found: list[Outline], card_like: list[Outline], cut: list[Outline],
                   shape: tuple[int, int]) -> CardNotFound:
    """A card cut off by the frame, when one is seen (or a part of a card near the frame); else nothing found."""
    if cut:
        best = max(cut, key=lambda o: o.area)
        return CardNotFound(CARD_CUT_OFF, {"area": round(best.area, 4), "support": round(best.support, 3)})
    if card_like:
        part = max(card_like, key=lambda o: o.area)
        reason = CARD_CUT_OFF if _near_frame(part, shape) else NO_CARD
        return CardNotFound(reason, {"outlines": len(found), "part_area": round(part.area, 4)})
    return CardNotFound(NO_CARD, {"outlines": len(found)})


def _innermost_card(outer: Outline, cards: list[Outline]) -> Outline:
    """Inside a sleeve or top-loader, the card's own edge: a nested outline nearly as large, in truer proportions."""
    current = outer
    while True:
        inner = [c for c in cards if current.contains(c) and 0.6 <= c.area / current.area < 0.99
                 and abs(c.aspect - layout.TRIM_ASPECT) + 0.01 < abs(current.aspect - layout.TRIM_ASPECT)]
        inner += [c for c in cards if current.contains(c) and c.area / current.area >= 0.86
                  and abs(c.aspect - layout.TRIM_ASPECT) <= abs(current.aspect - layout.TRIM_ASPECT) + 0.02]
        if not inner:
            return current
        current = max(inner, key=lambda c: (c.support, c.area))


def _near_frame(o: Outline, shape: tuple[int, int]) -> bool:
    """Whether an outline comes within NEAR_FRAME of the photo's short side of its frame."""
    h, w = shape
    margin = NEAR_FRAME * min(h, w)
    lo, hi = o.polygon.min(axis=0), o.polygon.max(axis=0)
    return bool(lo[0] < margin or lo[1] < margin or hi[0] > w - margin or hi[1] > h - margin)


def _cut_card_like(o: Outline) -> bool:
    """An outline that runs off the frame, whose other sides are strong and meet at right angles inside the photo:
    what a card cut off by the frame's edge leaves."""
    if not any(o.on_frame) or o.area < 0.03:
        return False
    inside_corners = sum(1 for i in range(len(o.polygon)) if not o.on_frame[i - 1] and not o.on_frame[i])
    return inside_corners >= 1 and o.square <= 22 and o.support >= CUT_SUPPORT and o.weakest >= 0.5


def _loosely_card_shaped(width: int, height: int) -> bool:
    return abs(min(width, height) / max(width, height) - layout.TRIM_ASPECT) / layout.TRIM_ASPECT <= LOOSE_ASPECT


def _is_whole_image(quad: np.ndarray, w: int, h: int) -> bool:
    frame = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float64)
    slack = EDGE_SLACK * np.array([w, h])
    return all(np.any(np.all(np.abs(frame - corner) <= slack, axis=1)) for corner in quad)
