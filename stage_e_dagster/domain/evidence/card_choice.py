"""Which outline in a photo is the card (`choose`), or the reason there is no single whole one.

Among the candidate outlines (`card_outline`), a card (or its holder) lies on the surface; an outline inside
another card-like one, or ringed by anything but the surface, is a part of a card. A card cut off by the frame
leaves a shape run off the photo with strong straight sides; a second card lies apart from the first, a whole
card's shape once its sides are settled, and no patch of the surface beside a card proved by its frame lines;
a part of a card beside the chosen outline is no second card when that outline is no card proved and both lie
within reach of a card cut off by the frame (two parts of the card cut off, its own edge lost); inside a sleeve or
top-loader the card's own edge wins when it is in truer proportions than the holder's.
"""

from __future__ import annotations

from collections.abc import Callable

import cv2
import numpy as np

from stage_e_dagster.domain import layout
from stage_e_dagster.domain.evidence.card_answer import CARD_CUT_OFF, NO_CARD, SEVERAL_CARDS, CardNotFound
from stage_e_dagster.domain.evidence.card_outline import (
    FRAME_SLACK,
    SURFACE_DELTA,
    Outline,
    Prepared,
    joined,
    surface_around,
    surface_distance,
)
from stage_e_dagster.domain.evidence.card_settle import true_aspect

# A second card-like outline at least this share of the best one's area makes a photo of several cards.
SECOND_CARD_AREA = 0.4
# A second card smaller than this share of the photo is not counted (a mana symbol's box is card-like too).
MIN_RIVAL_AREA = 0.03
# A card-like outline beside the card, apart from it, at least this share of its area: a part of a second card.
PART_OF_ANOTHER = 0.15
# A holder's area is at most this many times its card's (a top-loader's is 1.4); a card seen in one is within
# HELD_ASPECT of a card's proportions.
HOLDER_AREA, HELD_ASPECT = 1.5, 0.015
# A part beside the card counts only apart from the card grown by this (its holder), and when settled on its own
# edges it takes a card's proportions within BESIDE_ASPECT.
HOLDER_REACH, BESIDE_ASPECT = 1.12, 0.025
# A part of the card beside the chosen outline touches it grown by this about its centre; the largest this many
# such parts are tried.
SPLIT_REACH, SPLIT_LOOKS = 1.1, 2
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
# A larger outline round a part of a card, reaching the photo's frame with sides whose mean support is at least
# this (a card-like outline's), is the part's card run off the photo.
RUN_OFF_SUPPORT = 0.72
# A part of a card reaches this many times its size about its centre (a card is about 2.3 times its art box's
# height): a card cut off by the frame within it may be the part's card.
PART_REACH = 2.0

def choose(found: list[Outline], prepared: Prepared, settler: Callable[[np.ndarray], np.ndarray] | None = None,
           proved: Callable[[np.ndarray], bool] | None = None) -> Outline | CardNotFound:
    """The card among the outlines, or the reason there is no single whole one.

    A card (or its holder) lies on the surface: a card-like outline ringed by anything else, or lying inside another
    card-like outline or a card cut off by the frame, is a part of a card (its frame, its art box, a symbol). When
    no card-like outline lies on the surface, one inside no other card-like one (a cut-off shape may hold it) whose
    own printing `proved` it a whole card (its face, straightened, shows its frame lines) is the card: a top-loader
    run off the photo rings it with plastic, not the surface, and no outline of the holder closes; a shadow's edge
    cut by the frame makes a cut-off shape round a whole card. Two card-like outlines side by side that together
    make a card's shape proved by its frame lines are parts of one card (a line across it split its outline). A
    card-like patch of the surface beside a card proved whole is dropped (`_without_patches`); a part of a card
    beside the chosen outline, that outline not `proved` a card and a card cut off by the frame within reach of both
    (`cut_beside`), is a part of the card cut off, not of a second card."""
    h, w = prepared.lab.shape[:2]  # (an outline with a corner beyond the photo's frame is no whole card)
    card_like = [o for o in found if o.card_like and within(o.polygon, w, h)]
    cut = [o for o in found if _cut_card_like(o)]
    outer = [c for c in card_like if not any(o.contains(c) for o in card_like)
             and not any(o.contains(c) and not _held(c, o) for o in cut)]
    top = [c for c in outer if surface_around(c.polygon, prepared.lab, prepared.rim) >= ON_SURFACE]
    if not top and proved is not None:  # (a holder run off the photo, or a shadow's edge cut by it, round a card)
        looks = outer + [c for c in card_like if all(c is not o for o in outer)
                         and not any(o.contains(c) for o in card_like)]
        top = [c for c in sorted(looks, key=lambda o: -o.area)[:PROOF_LOOKS] if proved(c.polygon)][:1]
    if proved is not None and top:
        top = _without_patches(top, prepared, proved, bool(cut))
    if not top:
        return _no_whole_card(found, card_like, cut, prepared.lab.shape[:2])
    best = max(top, key=lambda o: o.area)
    # A card's frame inside a card cut off by the frame, larger than any whole card: the photo's card is cut off.
    parts = [c for c in card_like if any(o.contains(c) and not _held(c, o) for o in cut)
             and c is not best and not best.contains(c)]
    if parts and max(o.area for o in parts) > best.area:
        return CardNotFound(CARD_CUT_OFF, {"area": round(max(o.area for o in cut), 4),
                                           "part_area": round(max(o.area for o in parts), 4)})
    if proved is not None:  # the card split by a glare band's edge: its part on the surface and a part beside it
        best = _split_card(best, card_like, proved, w, h)
    # A second card lies apart from the first (two outlines that overlap are parts of one card) and is a whole
    # card's shape once its sides are settled on its own edges.
    rivals = [o for o in top if o is not best and o.area >= SECOND_CARD_AREA * best.area and o.support >= 0.8
              and o.area >= MIN_RIVAL_AREA and not overlaps(o, best)]
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
              and not o.contains(best) and not overlaps(o, best, HOLDER_REACH) and not surface_inside(o, prepared)]
    if settler is not None:  # only a whole card's shape counts, once its sides are settled on its own edges
        beside = [o for o in beside if abs(true_aspect(settler(o.polygon)) - layout.TRIM_ASPECT) <= BESIDE_ASPECT]
    if proved is not None and beside and cut_beside(best, found) and not proved(best.polygon):
        beside = [o for o in beside if not cut_beside(o, found)]  # (parts of the card cut off beside them)
    if beside:
        return CardNotFound(SEVERAL_CARDS, {"cards": 2, "area": round(best.area, 4),
                                            "part_area": round(max(o.area for o in beside), 4)})
    return _innermost_card(best, card_like)


def _without_patches(top: list[Outline], prepared: Prepared, proved: Callable[[np.ndarray], bool],
                     cut_seen: bool) -> list[Outline]:
    """The card-like outlines on the surface but the patches of it (`surface_inside`, the face showing no frame
    lines: a plank's stretch between two seams in a card's shape) when another of them is `proved` a whole card by
    its frame lines, or when all of them are patches and a card cut off by the frame is seen (`cut_seen`): a patch
    beside a card, whole or cut off, is neither the card nor a second one, however large."""
    maybe = [c for c in top if surface_inside(c, prepared)]
    if not maybe or (len(maybe) == len(top) and not cut_seen):  # (none to tell the patches by)
        return top
    patches = [c for c in maybe if not proved(c.polygon)]
    rest = [c for c in top if all(c is not p for p in patches)]
    if not patches:
        return top
    if not rest:
        return [] if cut_seen else top
    return rest if any(proved(c.polygon) for c in rest) else top


def _split_card(best: Outline, card_like: list[Outline], proved: Callable[[np.ndarray], bool], w: int,
                h: int) -> Outline:
    """The whole card `best` is a part of, when a line across the card (a glare band's edge, a shadow's) split its
    outline: `best` and a card-like outline touching it side by side (neither inside the other), whose joined
    outline `proved` a whole card by its frame lines; else `best`. The part beside may lie off the surface (the
    art box below a band), so it is looked for among all card-like outlines, the largest SPLIT_LOOKS first."""
    beside = [o for o in card_like if o is not best and o.area >= PART_OF_ANOTHER * best.area
              and not best.contains(o) and not o.contains(best) and overlaps(o, best, SPLIT_REACH)]
    for o in sorted(beside, key=lambda o: -o.area)[:SPLIT_LOOKS]:
        whole = joined(best, o, w, h)
        if whole is not None and whole.area > best.area and proved(whole.polygon):
            return whole
    return best


def _held(card: Outline, outer: Outline) -> bool:
    """Whether `outer` is a holder round `card` (a sleeve or top-loader, perhaps run off the photo while the card
    is whole): at most HOLDER_AREA times the card's area, the card in exactly a card's proportions."""
    return (outer.area <= HOLDER_AREA * card.area
            and abs(true_aspect(card.polygon) - layout.TRIM_ASPECT) <= HELD_ASPECT)


def surface_inside(o: Outline, prepared: Prepared) -> bool:
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


def within(polygon: np.ndarray, w: int, h: int, slack: float = 1.0) -> bool:
    """Whether every corner lies inside the w x h photo (`slack` pixels past its top and left edges allowed)."""
    return bool(np.all(polygon >= -slack) and np.all(polygon[:, 0] <= w) and np.all(polygon[:, 1] <= h))


def overlaps(a: Outline, b: Outline, grow_b: float = 1.0) -> bool:
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
        if near_frame(part, shape):  # (a guess from a part's place: the finder looks round the part first)
            return CardNotFound(CARD_CUT_OFF, {"outlines": len(found), "part_area": round(part.area, 4),
                                               "near_frame": True})
        return CardNotFound(NO_CARD, {"outlines": len(found), "part_area": round(part.area, 4)})
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


def near_frame(o: Outline, shape: tuple[int, int]) -> bool:
    """Whether an outline comes within NEAR_FRAME of the photo's short side of its frame."""
    h, w = shape
    margin = NEAR_FRAME * min(h, w)
    lo, hi = o.polygon.min(axis=0), o.polygon.max(axis=0)
    return bool(lo[0] < margin or lo[1] < margin or hi[0] > w - margin or hi[1] > h - margin)


def runs_off_round(part: Outline, found: list[Outline], shape: tuple[int, int]) -> bool:
    """Whether an outline that is a part of a card (no whole card's face) lies inside a larger outline reaching the
    photo's frame with strong straight sides: the card it is a part of runs off the photo, and its small size says
    nothing of the card's. A card run off the frame on a surface of weak contrast leaves such a shape, its sides too
    faint to pass for a cut-off card's on their own (`_cut_card_like`), or its last side a few pixels short of the
    frame; a small card on a palm lies inside the palm's curved outline, whose sides are weak. So does a part
    with a card cut off beside it (`cut_beside`)."""
    h, w = shape
    slack = FRAME_SLACK
    return any(o.contains(part) and o.support >= RUN_OFF_SUPPORT
               and bool(np.any(o.polygon < slack) or np.any(o.polygon[:, 0] > w - 1 - slack)
                        or np.any(o.polygon[:, 1] > h - 1 - slack)) for o in found) or cut_beside(part, found)


def cut_beside(part: Outline, found: list[Outline]) -> bool:
    """Whether a card cut off by the frame (`_cut_card_like`: a shape run off the photo with strong straight sides
    and right angles) lies within its card's reach of an outline that is a part of a card (no whole card's face):
    the part grown by PART_REACH about its centre, as far as a card reaches round its art box. A card cut off at its
    text box leaves the text box's cut shape at the frame and its art box whole beside it, in two parts when glare
    splits it: the parts are of the card cut off, and their small size says nothing of the card's."""
    return any(_cut_card_like(o) and overlaps(o, part, PART_REACH) for o in found if o is not part)


def _cut_card_like(o: Outline) -> bool:
    """An outline that runs off the frame, whose other sides are strong and meet at right angles inside the photo:
    what a card cut off by the frame's edge leaves."""
    if not any(o.on_frame) or o.area < 0.03:
        return False
    inside_corners = sum(1 for i in range(len(o.polygon)) if not o.on_frame[i - 1] and not o.on_frame[i])
    return inside_corners >= 1 and o.square <= 22 and o.support >= CUT_SUPPORT and o.weakest >= 0.5
