"""Find the card in an uploaded image: a scan is already the card; a photo holds one, to be cut out and straightened.

`find_card(image)` answers with a `FoundCard` (the card alone, upright, and its four corners in the image) or a
`CardNotFound` naming why no single whole card could be isolated. No guess: a photo of several cards, a card run
off the frame or a card too small in it is a named skip.

- **Already a card.** An image in a card's proportions (trimmed or with bleed, `geometry.classify_bleed`) is a scan
  or a render: it comes back as it is, with the image's own corners, for the cost of one division. So is an image
  in other proportions whose best outline is the image's own edge.
- **A photo.** Outlines are searched on a copy about 640 px long (`card_outline`); the card is the best supported
  four-sided outline in a card's proportions that lies on the surface (`card_choice`); inside a sleeve or top-loader
  the card's own edge wins when it is in truer proportions than the holder's, or when its face shows its frame lines
  where they are while the holder's fit had to move its corners. Its sides are then settled on the card's own edges
  (`card_settle`: a frame inside a dark border grows out to the card's faint edge, seen in colour or in texture; a
  frame grown across a black border to the photo's edge gives way to the card round it when that lies whole in the
  photo), and a card whose settled outline, perspective undone, is not in a card's proportions is a part of a card: a
  skip, never a guess, unless a card-like outline inside it is proved a whole card by its lines (it was a patch of the
  surface round the card) or the card is found round its printed boxes. Several cards are judged by whole card-shaped
  outlines apart from each other, not by parts of one card. The full-resolution image is warped to a portrait card at
  the size the photo shows it (capped), in exactly the trimmed card's proportions, and turned upright
  (`card_straighten`), its corners moved to where its own frame lines put its edges (`card_layout`). A card whose
  straightened face does not show nearly all its frame lines where they belong was a part of a card, a guess or an
  outline off the card: a skip, unless it is the art box of a card that lies whole round it, another outline over the
  same card shows them, or it lay on the card's frame and the card round it shows them; and a card-like outline apart
  from the card whose face shows a card's frame lines is a second card (`card_faces`). An outline that shows no frame
  lines is a card cut off, not no card, when a shape cut by the frame with strong straight sides lies within its
  card's reach (`card_choice.cut_beside`: a holder's outline beside its card run off the photo). A card whose edge
  left no outline is looked for round its printed text box or art box, proved by its frame lines (`card_parts`), and
  so is a card whose only outlines are parts near the frame before it is called cut off; an outline across the card's
  width cut short by a line across it (a glare band's edge) or drawn long past its end (a palm's edge) is no card's
  shape, or a card's turned a quarter (half a card), and the card along it, sharing its long sides and one end, is
  read for its frame lines before the outline is skipped. A part of a card too small to be one, inside a shape run off
  the photo's frame with straight sides, is a card cut off, not a small one. A photo skipped as holding no card or a
  card cut off is looked at closer round its small outlines (a card's shape or a palm's), and with no card found on a
  copy twice as large: a whole card there, too small to read, makes it a photo of a card too small; failing that, a
  part of a card (its text or art box) whose card runs off the frame, its edges seen inside the photo, makes it a
  photo of a card cut off (`card_parts.cut_off_round_part`).
- **A small photo** (under 1280 px on its long side: a site's copy of a phone's photo) is searched enlarged to that
  size, so that its copies are the sizes the finder's thresholds were set on; its card is cut out of the photo itself.

Corners are normalised to the input image (0..1), in the order the card reads: top-left, top-right, bottom-right,
bottom-left.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import cv2
import numpy as np
from PIL import Image

from stage_e_dagster.domain import layout
from stage_e_dagster.domain.evidence.card_answer import (
    CARD_CUT_OFF,
    CARD_TOO_SMALL,
    NO_CARD,
    PHOTO,
    SCAN,
    SEVERAL_CARDS,
    SKIP_REASONS,
    CardNotFound,
    FoundCard,
    image_corners,
)
from stage_e_dagster.domain.evidence.card_border import grow
from stage_e_dagster.domain.evidence.card_choice import (
    HOLDER_REACH,
    MIN_RIVAL_AREA,
    choose,
    cut_beside,
    near_frame,
    overlaps,
    runs_off_round,
    within,
)
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
    ASPECT_RANGE,
    Outline,
    Prepared,
    enlarged,
    outlines,
    prepare,
    reduced_copy,
)
from stage_e_dagster.domain.evidence.card_parts import (
    Straightened,
    card_by_parts,
    cut_off_round_part,
    second_by_parts,
)
from stage_e_dagster.domain.evidence.card_settle import Directional, settle, true_aspect
from stage_e_dagster.domain.evidence.card_straighten import corners_moved, portrait_order, straighten
from stage_e_dagster.domain.evidence.card_straighten import warp_card as warp_card  # (where callers look for it)
from stage_e_dagster.domain.evidence.geometry import classify_bleed

__all__ = ["CARD_CUT_OFF", "CARD_TOO_SMALL", "NO_CARD", "PHOTO", "SCAN", "SEVERAL_CARDS", "SKIP_REASONS",
           "CardNotFound", "FoundCard", "find_card", "image_corners", "is_card_shaped", "warp_card"]

# One thread: the finder runs inside OCR workers, one per core.
cv2.setNumThreads(1)

# The long side of the copy outlines are searched on.
WORK_LONG_SIDE = 640
# A photo smaller than this on its long side is searched enlarged to it: the outlines' copy and the texture copy
# twice its size are then the sizes the finder's thresholds were set on, as they are for a phone's photo.
FIND_LONG_SIDE = 2 * WORK_LONG_SIDE
# A card under this share of the photo's area is too small to read.
MIN_CARD_AREA = 0.10
# The found outline, settled on its edges and perspective undone, must be within this of a card's proportions.
WHOLE_ASPECT = 0.035
# Another outline over the chosen one, at least this share of its area, is read for the card (`another_outline`).
OTHER_AREA = 0.5
# An image within this (relative) of a trimmed card's proportions, in which no outline is found, is taken as a
# loosely cropped scan rather than skipped. It stops short of a phone's 3:4 (0.75).
LOOSE_ASPECT = 0.04
# A photo skipped as holding no card or a card cut off is looked at closer round its largest ZOOM_LOOKS small
# outlines (ZOOM_AREA of the photo, their proportions within ZOOM_ASPECT: a card's, or a palm's round a card): square
# crops ZOOM times the outline's size (the last just round a palm's blob, whose wider crops can show more of the
# surface than of the card), at least ZOOM_SIDE pixels, in which a card of at least ZOOM_MIN_CARD of the photo is read.
ZOOM, ZOOM_SIDE, ZOOM_LOOKS, ZOOM_AREA = (2.5, 1.5, 1.1), 480, 3, (0.01, 0.2)
ZOOM_ASPECT, ZOOM_MIN_CARD, ZOOM_FULL = (ASPECT_RANGE[0], 1.0), 0.01, 0.85
# Inside an outline chosen for the card that is no card's shape, the largest INSIDE_LOOKS card-like outlines of at
# least INSIDE_AREA of its area are read for a whole card's frame lines.
INSIDE_LOOKS, INSIDE_AREA = 2, 0.3
# A card whose fit moved its outline's corners over HOLDER_MOVED of its size may be a top-loader: a card-like
# outline inside it, HOLDER_INNER of its area, whose fit moves its corners at most HOLDER_STILL, is the card.
HOLDER_MOVED, HOLDER_INNER, HOLDER_STILL = 0.02, (0.55, 0.86), 0.01
# Corners within this share of the image's sides of the image's own corners: the card's edges are the image's.
EDGE_SLACK = 0.03


def is_card_shaped(width: int, height: int) -> bool:
    """Whether an image has a card's proportions, trimmed or with bleed (the cheap test that passes scans)."""
    return classify_bleed(width, height).bleed_class != "ambiguous"


def find_card(image: Image.Image, zoom: bool = True, min_area: float = MIN_CARD_AREA,
              enlarge: bool = True) -> FoundCard | CardNotFound:
    """The card in `image` (RGB), or why no single whole card can be isolated (see the module's docstring); with
    `zoom`, a photo skipped as holding no card or a card cut off is looked at closer round its small card-like
    outlines (`_small_card`). A card under `min_area` of the image is too small to read (a crop looked at closer
    passes a smaller one: the card is measured against the whole photo afterwards). With `enlarge`, a photo under
    FIND_LONG_SIDE is searched enlarged to it (`enlarged`), and its card cut out of the photo itself."""
    width, height = image.size
    if is_card_shaped(width, height):
        return FoundCard(image, image_corners(), SCAN)
    if enlarge and max(width, height) < FIND_LONG_SIDE:
        seen = find_card(enlarged(image, FIND_LONG_SIDE), zoom, min_area, enlarge=False)
        return seen if isinstance(seen, CardNotFound) else replace(
            seen, image=image if seen.kind == SCAN else warp_card(image, seen.corners))
    small = reduced_copy(image, WORK_LONG_SIDE, "RGB")  # the outlines' working copy, and its scale against `image`
    factor = small.shape[1] / image.width
    prepared = prepare(small, reduced_copy(image, 2 * WORK_LONG_SIDE, "L"))  # (for the texture channel)
    found = outlines(prepared)
    answer = _answer(image, small, prepared, found, factor, min_area)
    if zoom and isinstance(answer, CardNotFound) and answer.reason in (NO_CARD, CARD_CUT_OFF):
        # (a card cut off told only by a shape run off the frame too small for a card's part: a surface's blob?)
        cut_small = "support" in answer.detail and answer.detail["area"] < MIN_CARD_AREA
        small_card = _small_card(image, found, factor, answer.reason == NO_CARD or cut_small)
        if small_card is not None:
            return small_card
        if answer.reason == NO_CARD and cut_off_round_part(found, prepared):
            return CardNotFound(CARD_CUT_OFF, {**answer.detail, "part": "its card runs off the photo"})
    return answer


def _answer(image: Image.Image, small: np.ndarray, prepared: Prepared, found: list[Outline],
            factor: float, min_area: float, retry: bool = True) -> FoundCard | CardNotFound:
    """The card among the outlines `found` on the small copy of a photo (its scale `factor`), or the skip. An
    outline chosen for the card that is no card's shape once settled is a part of one, or a patch of the surface
    (planks, a palm) round the card: with `retry`, when a card-like outline inside it is proved a whole card by its
    frame lines, the card is chosen again without it; else the card is looked for round its printed boxes."""
    width, height = image.size
    channels = list(cv2.split(prepared.lab)) + ([prepared.texture] if prepared.texture is not None else [])
    colours = np.dstack(channels).astype(np.float32) if prepared.texture is not None else None
    directional = Directional.of(channels)
    sh, sw = small.shape[:2]
    def proved(q: np.ndarray) -> bool:
        return _proved(image, settle(q, directional, colours) / factor, (sw, sh), factor)
    chosen = choose(found, prepared, lambda q: settle(q, directional, colours), proved)
    if isinstance(chosen, CardNotFound):
        if chosen.detail.get("near_frame"):  # (only a part, near the frame: the card round it may lie whole)
            return _by_parts(image, found, prepared, factor, min_area) or chosen
        if chosen.reason != NO_CARD:  # (a shape run off the frame calls the card cut off)
            return chosen
        if _loosely_card_shaped(width, height):
            return FoundCard(image, image_corners(), SCAN, detail={"loose": True})
        return _by_parts(image, found, prepared, factor, min_area) or chosen
    picked, quad = chosen, chosen.polygon
    grown = grow(quad, prepared.lab, prepared.gradient)
    if grown.runs_off and not proved(quad):  # (a holder's band or a shadow grown on to the frame, round a card
        held = _round_frame_within(image, settle(quad, directional, colours) / factor)
        if held is None:  # whose own face shows its lines, or a frame whose card lies whole round it: the card
            return CardNotFound(CARD_CUT_OFF, {"area": round(chosen.area, 4), "border": "runs off the photo"})
        area = float(abs(cv2.contourArea(held[2].astype(np.float32)))) / (width * height)  # is whole)
        return _one_card(image, found, prepared, factor, held, area, {"frame": True, "layout": round(held[3], 3)},
                         min_area)
    if grown.quad is not None and not grown.runs_off:
        quad = grown.quad
    settled = settle(quad, directional, colours)
    if not (np.any(settled < 0) or np.any(settled[:, 0] > sw) or np.any(settled[:, 1] > sh)):
        quad = settled  # (a side settled past the photo's frame found an edge of the surface, not the card's)
    if np.any(quad < 0) or np.any(quad[:, 0] > sw) or np.any(quad[:, 1] > sh):
        return CardNotFound(CARD_CUT_OFF, {"area": round(chosen.area, 4), "border": "grown past the photo"})
    chosen = replace(chosen, area=float(abs(cv2.contourArea(quad.astype(np.float32)))) / (sw * sh))
    aspect = true_aspect(quad)
    if abs(aspect - layout.TRIM_ASPECT) > WHOLE_ASPECT:  # a part of a card, no whole one: no guess
        if retry and any(proved(o.polygon) for o in _inside(picked, found)):  # (a patch of the surface round it)
            return _answer(image, small, prepared, [o for o in found if o is not picked], factor, min_area, False)
        near = near_frame(replace(chosen, polygon=quad), (sh, sw))
        return _by_parts(image, found, prepared, factor, min_area, quad) or CardNotFound(
            CARD_CUT_OFF if near else NO_CARD, {"area": round(chosen.area, 4), "aspect": round(aspect, 3)})
    quad = portrait_order(quad)
    if _is_whole_image(quad, sw, sh):
        return FoundCard(image, image_corners(), SCAN, detail={"edges": "image"})
    full_quad = quad / factor
    area = chosen.area
    if area < min_area and area / ART_BOX_AREA < min_area:
        return CardNotFound(CARD_TOO_SMALL, {"area": round(area, 4), "min_area": min_area})
    card, margin, quad_full, lines = straighten(image, full_quad)
    if lines >= LAYOUT_MIN and corners_moved(full_quad, quad_full) > HOLDER_MOVED:
        inner = _card_in_holder(image, picked, found, lambda q: settle(q, directional, colours) / factor)
        if inner is not None:
            card, margin, quad_full, lines = inner
            area = float(abs(cv2.contourArea(quad_full.astype(np.float32)))) / (width * height)
    if lines < LAYOUT_MIN:  # the outline is no whole card's: a part of one (its art box?), or a guess
        held = around_art_box(image, full_quad, lambda q: edges_seen(q * factor, prepared.gradient))
        if held is None:  # another outline over the same card (its holder, the card in it) whose face shows them
            others = [o for o in found if o.card_like and o is not picked and o.area >= OTHER_AREA * picked.area
                      and overlaps(o, picked)]
            held = another_outline(image, [o.polygon for o in sorted(others, key=lambda o: o.area)],
                                   lambda q: settle(q, directional, colours) / factor)
        if held is None:  # the outline lay on the card's frame, inside a border the colour of the surface
            held = round_frame(image, full_quad)
        if held is None:
            if art_box_runs_off(full_quad, (width, height), lambda q: edges_seen_inside(
                    q * factor, prepared.gradient)):  # the art box of a card cut off by the frame
                return CardNotFound(CARD_CUT_OFF, {"area": round(area, 4), "layout": round(lines, 3),
                                                   "art_box": "its card runs off the photo"})
            small_part = area < min_area and not runs_off_round(picked, found, (sh, sw))  # (else a part of one cut off)
            return (_by_parts(image, found, prepared, factor, min_area, full_quad * factor) or CardNotFound(
                CARD_TOO_SMALL if small_part else CARD_CUT_OFF if area < min_area or cut_beside(picked, found)
                else NO_CARD,
                {"area": round(area, 4), "layout": round(lines, 3), "min_area": min_area}))
        card, margin, quad_full, lines = held
        area = float(abs(cv2.contourArea(quad_full.astype(np.float32)))) / (width * height)
    detail = {"support": round(chosen.support, 3), "aspect": round(chosen.aspect, 3), "layout": round(lines, 3)}
    return _one_card(image, found, prepared, factor, (card, margin, quad_full, lines), area, detail, min_area)


def _one_card(image: Image.Image, found: list[Outline], prepared: Prepared, factor: float, held: Straightened,
              area: float, detail: dict[str, Any], min_area: float) -> FoundCard | CardNotFound:
    """The straightened card `held` (its image, orientation margin, corners in full-image pixels and frame-line
    share), `area` its share of the photo, as the answer: unless it is too small to read, or a second card lies
    apart from it (its own outline's face or a part of its printing shows a card's frame lines)."""
    width, height = image.size
    card, margin, quad_full, _ = held
    if area < min_area:
        return CardNotFound(CARD_TOO_SMALL, {"area": round(area, 4), "min_area": min_area})
    second = second_card(image, found, quad_full * factor, factor, HOLDER_REACH, MIN_RIVAL_AREA)
    if second is None:
        second = second_by_parts(image, found, prepared, factor, _grown(quad_full * factor, HOLDER_REACH))
    if second is not None:
        return CardNotFound(SEVERAL_CARDS, {"cards": 2, "area": round(area, 4), "second_area": round(second, 4)})
    corners = tuple((float(x) / width, float(y) / height) for x, y in quad_full)
    return FoundCard(card, corners, PHOTO, area=round(area, 4),  # type: ignore[arg-type]
                     orientation_margin=round(margin, 3), detail=detail)


def _by_parts(image: Image.Image, found: list[Outline], prepared: Prepared, factor: float, min_area: float,
              along: np.ndarray | None = None) -> FoundCard | CardNotFound | None:
    """The answer for the card found along the chosen outline `along` (small-copy pixels, when it made no card) or
    round a part of its printing (`card_parts`) when no outline of it made a card, or None when none is."""
    held = card_by_parts(image, found, prepared, factor, along)
    if held is None:
        return None
    area = float(abs(cv2.contourArea(held[2].astype(np.float32)))) / (image.width * image.height)
    return _one_card(image, found, prepared, factor, held, area, {"part": True, "layout": round(held[3], 3)},
                     min_area)


def _small_card(image: Image.Image, found: list[Outline], factor: float, larger: bool) -> CardNotFound | None:
    """A card too small to read, seen closer: a photo with no card found (or one cut off) where a square crop round
    one of its largest small outlines (ZOOM_LOOKS of them: whole, four-sided, in a card's rough proportions or a
    palm's, covering ZOOM_AREA of the photo, card-like ones first), looked at afresh, holds a whole card (proved by
    its frame lines like any) under MIN_CARD_AREA of the photo. On the 640 px copy such a card is a few dozen pixels
    wide: its edge merges with a palm's or a playmat's blob, and its sides settle off; seen closer, they do not.
    Each look is cropped ZOOM times the outline's size, then closer (the outline may be a blob round the card, a
    palm, whose crop still shows the blob's edge); crops nearly the photo's size are not looked at. With `larger`
    (no card found, or a card cut off told only by a shape run off the frame smaller than MIN_CARD_AREA: a blob of
    the surface with straight sides) and no outline showing a small card, the outlines are searched again on a copy
    twice as large (`_larger_outlines`): a small card's thin border, closed into its frame's edges on the 640 px
    copy, leaves it no outline there. Only a skip's reason changes: no card is answered."""
    small = _seen_closer(image, found, factor)
    if small is None and larger:
        small = _seen_closer(image, *_larger_outlines(image))
    return small


def _seen_closer(image: Image.Image, found: list[Outline], factor: float) -> CardNotFound | None:
    """`_small_card` round the outlines `found` on a copy of scale `factor`."""
    width, height = image.size
    looks = [o for o in found if o.whole and ZOOM_ASPECT[0] <= o.aspect <= ZOOM_ASPECT[1]
             and ZOOM_AREA[0] <= o.area < ZOOM_AREA[1]]
    for o in sorted(looks, key=lambda o: (not o.card_like, -o.area))[:ZOOM_LOOKS]:
        quad = o.polygon / factor
        centre, extent = quad.mean(axis=0), float(np.max(np.ptp(quad, axis=0)))
        for zoom in ZOOM:
            side = min(max(zoom * extent, ZOOM_SIDE), width, height)
            if side > ZOOM_FULL * min(width, height):
                continue  # (no closer than the photo itself)
            x0 = int(min(max(centre[0] - side / 2, 0), width - side))
            y0 = int(min(max(centre[1] - side / 2, 0), height - side))
            crop = image.crop((x0, y0, x0 + int(side), y0 + int(side)))
            closer = find_card(crop, zoom=False, enlarge=False, min_area=ZOOM_MIN_CARD * width * height / (side * side))
            if isinstance(closer, FoundCard) and closer.kind == PHOTO:
                area = closer.area * crop.width * crop.height / (width * height)
                if area < MIN_CARD_AREA:
                    return CardNotFound(CARD_TOO_SMALL, {"area": round(area, 4), "min_area": MIN_CARD_AREA,
                                                         "seen": "closer"})
                break  # (a card as large as any: no small one here)
            if isinstance(closer, CardNotFound) and closer.reason == CARD_CUT_OFF and "support" in closer.detail:
                break  # (a card run off the crop's frame: a closer crop cuts it more)
    return None


def _larger_outlines(image: Image.Image) -> tuple[list[Outline], float]:
    """The outlines on a copy of `image` twice the working copy's size (colour edges only), and its scale."""
    larger = reduced_copy(image, 2 * WORK_LONG_SIDE, "RGB")
    return outlines(prepare(larger)), larger.shape[1] / image.width


def _grown(quad: np.ndarray, by: float) -> np.ndarray:
    centre = quad.mean(axis=0)
    return centre + (quad - centre) * by


def _proved(image: Image.Image, quad: np.ndarray, small: tuple[int, int], factor: float) -> bool:
    """Whether an outline (settled, full-image pixels) is a whole card by its own printing: it lies inside the
    photo and its face, straightened, shows nearly all its frame lines (LAYOUT_MIN) without moving its corners off
    it (a frame or an art box, fitted out to a card running off the photo, is no card seen whole)."""
    if not within(quad * factor, *small):
        return False
    _, _, moved, lines = straighten(image, portrait_order(quad))
    return lines >= LAYOUT_MIN and within(moved * factor, *small)


def _card_in_holder(image: Image.Image, holder: Outline, found: list[Outline],
                    settled: Callable[[np.ndarray], np.ndarray]) -> Straightened | None:
    """The card inside a top-loader taken for it: a card-like outline inside the chosen one, HOLDER_INNER of its
    area, whose face shows its frame lines where they are (the fit keeps its corners). A top-loader's face shows
    the card's lines too, the fit moving its corners in only part of the way, so the card's own outline is read
    when the fit moved the chosen one's."""
    inner = [o for o in found if o.card_like and o is not holder and holder.contains(o)
             and HOLDER_INNER[0] <= o.area / holder.area < HOLDER_INNER[1]]
    for o in sorted(inner, key=lambda o: -o.area)[:INSIDE_LOOKS]:
        quad = portrait_order(settled(o.polygon))
        held = straighten(image, quad)
        if held[3] >= LAYOUT_MIN and corners_moved(quad, held[2]) <= HOLDER_STILL:
            return held
    return None


def _inside(outer: Outline, found: list[Outline]) -> list[Outline]:
    """The largest INSIDE_LOOKS card-like outlines inside `outer`, at least INSIDE_AREA of its area."""
    inner = [o for o in found if o.card_like and o is not outer and outer.contains(o)
             and o.area >= INSIDE_AREA * outer.area]
    return sorted(inner, key=lambda o: -o.area)[:INSIDE_LOOKS]


def _round_frame_within(image: Image.Image, quad: np.ndarray) -> Straightened | None:
    """The card round an outline on its frame (`round_frame`: full-image pixels), when it lies inside the photo: a
    black border on a dark surface grows the frame's outline out to the photo's edge, though the card's own edge,
    found by its frame lines, stays inside it."""
    held = round_frame(image, portrait_order(quad))
    return held if held is not None and within(held[2], image.width, image.height) else None


def _loosely_card_shaped(width: int, height: int) -> bool:
    return abs(min(width, height) / max(width, height) - layout.TRIM_ASPECT) / layout.TRIM_ASPECT <= LOOSE_ASPECT


def _is_whole_image(quad: np.ndarray, w: int, h: int) -> bool:
    frame = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float64)
    slack = EDGE_SLACK * np.array([w, h])
    return all(np.any(np.all(np.abs(frame - corner) <= slack, axis=1)) for corner in quad)
