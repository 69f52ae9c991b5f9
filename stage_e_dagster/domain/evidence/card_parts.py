"""A card found from a part of its printing when its own edge leaves no outline.

A card's edge can vanish into the surface (a pale border on a pale blob of a playmat, a dark one on a dark cloth,
a sleeve's haze over both) while the boxes printed on it stay sharp: the text box (about 0.41 as tall as wide) and
the art box (about 0.72) have strong straight sides on any surface, at the places `layout` and `card_layout` give.
An outline in such a box's proportions stands for the card round it: two cards each (the box's long sides across
the card, the card's top beyond either), of which one is the card only when its face, straightened, shows nearly
all its frame lines where they belong (`card_layout`). That proof, not the outline, makes the card: a
box-shaped patch of the surface never shows a card's frame lines round it.

- `cards_round`: the cards an outline would be a given box of;
- `parts`: the outlines in a box's proportions, with strong straight sides, largest first;
- `cards_along`: the cards sharing an outline's two sides along the card and one of its ends, as long as a card
  is wide: the chosen outline spans the card's width but a line across the card (a glare band's edge, a plank's
  dark seam along a dark border, the name bar's top) cut it short, or a palm's edge beyond the card's end drew it
  long; the outline is then no card's shape, or a card's shape turned a quarter (half a card is 63 x 44 mm);
- `card_by_parts`: the first card round a part, or along the chosen outline, whose face, straightened from the
  full image, proves it whole (a photo whose card left no outline of its own);
- `cut_off_round_part`: whether a part's card runs off the photo, its edges seen where it lies inside (a card
  cut off whose own edge left no outline);
- `second_by_parts`: a card along a strong outline or round a part apart from the found card whose face shows its
  frame lines (a second card in the photo, its edge lost on the surface, or its outline closed across its middle):
  all of them whatever its colours, nearly all with its inside printed.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import chain

import cv2
import numpy as np
from PIL import Image

from stage_e_dagster.domain import layout
from stage_e_dagster.domain.evidence.card_choice import within
from stage_e_dagster.domain.evidence.card_faces import (
    SECOND_FIT,
    apart_from,
    edges_seen,
    edges_seen_inside,
    inside_parts,
)
from stage_e_dagster.domain.evidence.card_layout import ACROSS, ALONG, read_layout
from stage_e_dagster.domain.evidence.card_layout import SIZE as LAYOUT_SIZE
from stage_e_dagster.domain.evidence.card_outline import SURFACE_DELTA, Outline, Prepared, surface_distance
from stage_e_dagster.domain.evidence.card_settle import true_aspect
from stage_e_dagster.domain.evidence.card_straighten import portrait_order, straighten, warp_card

# The text box (x0, y0, x1, y1, share of the card): its sides along the card and its top and bottom across it.
TEXT_BOX = (ALONG[0], ACROSS[4], ALONG[1], ACROSS[5])
BOXES = (TEXT_BOX, layout.ART_BOX)
# A part's estimated proportions lie within this of its box's (perspective and the outline's fit move them).
PART_ASPECT = 0.07
# A part's sides lie on strong edges: their mean support at least the first, the weakest's the second; its
# corners within PART_SQUARE degrees of right angles.
PART_SUPPORT, PART_SQUARE = (0.85, 0.6), 12.0
# The largest this many parts of each box are tried.
PART_LOOKS = 2
# A card round a part shows the surface's colours over at most this share of its inside (a card's art and text
# box are printed; a card guessed a box's height off its place shows the surface where its lower half should be).
PART_SURFACE = 0.25
# A card found round a part has no outline of its own: its corners are where its frame lines put them, so its face
# must show more of them than an outlined card's (`LAYOUT_MIN`).
PART_LAYOUT = 0.95
# A card round a part is at least this share of the photo (smaller ones are read by no one: the box's sides blur).
MIN_PART_CARD = 0.015
# A card along an outline is between these times the outline's length (perspective undone); one within ALONG_SAME
# of the outline's own length is the outline, already read.
ALONG_REACH, ALONG_SAME = (0.6, 2.4), 0.015
# The straight estimate of a card along an outline is read when a corner lies this many pixels off the
# perspective one.
ALONG_APART = 1.0

# A second card round a part, its inside printed, is a card when its face shows at least this share of its frame
# lines: a little under a found card's (`LAYOUT_MIN`), for a card in a sleeve whose glare hides a line or two is
# still a card, and the surface round a box-shaped patch shows far fewer.
SECOND_LINES = 0.85

Straightened = tuple[Image.Image, float, np.ndarray, float]


def box_aspect(box: tuple[float, float, float, float]) -> float:
    """A box's short-over-long side ratio on the card (millimetres)."""
    w, h = (box[2] - box[0]) * layout.TRIM_MM[0], (box[3] - box[1]) * layout.TRIM_MM[1]
    return min(w, h) / max(w, h)


def cards_round(quad: np.ndarray, box: tuple[float, float, float, float]) -> list[np.ndarray]:
    """The cards (4 x 2, clockwise) an outline would be `box` of: the box's long sides across the card, the card's
    top beyond either long side."""
    corners = np.array([[box[0], box[1]], [box[2], box[1]], [box[2], box[3]], [box[0], box[3]]], np.float32)
    unit = np.array([[[0, 0], [1, 0], [1, 1], [0, 1]]], np.float64)
    cards = []
    for turn in range(4):
        q = np.roll(quad, -turn, axis=0)
        if np.linalg.norm(q[1] - q[0]) < np.linalg.norm(q[2] - q[1]):  # the box's top is a long side
            continue
        cards.append(cv2.perspectiveTransform(unit, cv2.getPerspectiveTransform(corners, q.astype(np.float32)))[0])
    return cards


def cards_along(quad: np.ndarray) -> list[np.ndarray]:
    """The cards (4 x 2, clockwise) sharing two opposite sides of an outline as the card's long sides and one of
    its other sides as the card's top or bottom, as long as a card is wide: for each side taken as the card's end,
    the outline's length across it (perspective undone, `true_aspect`) is stretched or cut to a card's, twice: in
    the outline's own perspective, and straight on along its sides' mean direction. An outline's far end, cut
    short by a line across the card, can lie a little off, and its perspective stretched twofold puts the card's
    other end far off it; a photo's perspective over one card is mild, so the straight estimate lands near it."""
    unit = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float32)
    aspect = max(true_aspect(quad), 1e-3)
    cards = []
    for turn in range(4):
        q = np.roll(quad, -turn, axis=0).astype(np.float32)
        across = np.linalg.norm(q[1] - q[0]) + np.linalg.norm(q[3] - q[2])
        along = np.linalg.norm(q[2] - q[1]) + np.linalg.norm(q[0] - q[3])
        long = 1 / (layout.TRIM_ASPECT * (aspect if across >= along else 1 / aspect))
        if not ALONG_REACH[0] <= long <= ALONG_REACH[1] or abs(long - 1) < ALONG_SAME:
            continue
        card = np.array([[[0, 0], [1, 0], [1, long], [0, long]]], np.float64)
        cards.append(cv2.perspectiveTransform(card, cv2.getPerspectiveTransform(unit, q))[0])
        step = ((q[2] - q[1]) + (q[3] - q[0])) / 2 * long
        straight = np.array([q[0], q[1], q[1] + step, q[0] + step], np.float64)
        if not np.allclose(straight, cards[-1], atol=ALONG_APART):
            cards.append(straight)
    return cards


def parts(found: list[Outline], box: tuple[float, float, float, float]) -> list[Outline]:
    """The whole four-sided outlines in `box`'s proportions with strong straight sides, largest first."""
    aspect = box_aspect(box)
    return [o for o in strong(found) if abs(o.aspect - aspect) <= PART_ASPECT]


def strong(found: list[Outline]) -> list[Outline]:
    """The whole four-sided outlines with strong straight sides, largest first."""
    return sorted((o for o in found if o.whole and o.support >= PART_SUPPORT[0] and o.weakest >= PART_SUPPORT[1]
                   and o.square <= PART_SQUARE), key=lambda o: -o.area)


def _candidates(found: list[Outline], prepared: Prepared, along: np.ndarray | None = None
                ) -> Iterator[tuple[np.ndarray, bool]]:
    """The cards (small-copy pixels) along the outline `along` (when given), then round the largest parts of each
    box, lying inside the photo; each with whether it was guessed round a part (and must show a printed inside)."""
    h, w = prepared.lab.shape[:2]
    cards = [(card, False) for card in (cards_along(along) if along is not None else [])]
    cards += [(card, True) for box in BOXES for part in parts(found, box)[:PART_LOOKS]
              for card in cards_round(part.polygon, box)]
    for card, part in cards:
        if _readable(card, w, h):
            yield card, part


def _readable(card: np.ndarray, w: int, h: int) -> bool:
    """Whether a card lies inside a w x h photo and covers at least MIN_PART_CARD of it."""
    return within(card, w, h, slack=0.0) and abs(cv2.contourArea(card.astype(np.float32))) >= MIN_PART_CARD * w * h


def _printed(card: np.ndarray, prepared: Prepared) -> bool:
    """Whether at most PART_SURFACE of a card's inside (away from its sides) has the colours of the photo's rim."""
    h, w = prepared.lab.shape[:2]
    centre = card.mean(axis=0)
    mask = np.zeros((h, w), np.uint8)
    cv2.fillConvexPoly(mask, np.rint(centre + (card - centre) * 0.9).astype(np.int32), 1)
    pixels = prepared.lab[mask > 0][::2]
    return len(pixels) > 0 and float(np.mean(surface_distance(pixels, prepared.rim) <= SURFACE_DELTA)) <= PART_SURFACE


def card_by_parts(image: Image.Image, found: list[Outline], prepared: Prepared, factor: float,
                  along: np.ndarray | None = None) -> Straightened | None:
    """The card along the chosen outline `along` (small-copy pixels, when given: `cards_along`) or round a part
    (text box or art box) of it, straightened from `image` (the full photo; `factor` maps it to the small copy
    `prepared`), when its face shows at least PART_LAYOUT of its frame lines, its corners, fitted to them, stay
    inside the photo and its fitted sides lie on edges (`edges_seen`: a fit that scaled the card past its edges
    matched other lines to the frame's; its inside is not weighed, for a card's face may match a wood's or a
    playmat's colours over much of it) or, round a part, its inside is printed, not the surface; else None."""
    h, w = prepared.lab.shape[:2]
    for card, part in _candidates(found, prepared, along):
        held = straighten(image, portrait_order(card / factor))
        moved = held[2] * factor
        if (held[3] >= PART_LAYOUT and np.all(moved >= -1) and np.all(moved[:, 0] <= w) and np.all(moved[:, 1] <= h)
                and ((part and _printed(moved, prepared)) or edges_seen(moved, prepared.gradient))):
            return held
    return None


def cut_off_round_part(found: list[Outline], prepared: Prepared) -> bool:
    """Whether a part of a card (a text box or art box with strong straight sides, `parts`) is of a card cut off by
    the frame: of the cards round it (`cards_round`), one with a side off the photo (`card_faces.inside_parts`) has
    its other sides, where they lie inside it, on edges (`card_faces.edges_seen_inside`), and none lying whole
    inside the photo has. A whole card's box has its own card round it, its edges seen; the card on the box's
    other side overlaps it and may show them too, so a box with a card seen inside the photo says nothing, nor does
    a card only a corner of which leaves the photo (a whole card's, shifted along it)."""
    h, w = prepared.lab.shape[:2]
    for box in BOXES:
        for part in parts(found, box)[:PART_LOOKS]:
            seen = []
            for card in cards_round(part.polygon, box):
                whole = within(card, w, h, slack=0.0)
                side_off = any(side is None for side in inside_parts(card, (h, w)))
                seen.append((whole, side_off, edges_seen_inside(card, prepared.gradient)))
            if (any(off and edges for _, off, edges in seen)
                    and not any(edges for inside, _, edges in seen if inside)):
                return True
    return False


def second_by_parts(image: Image.Image, found: list[Outline], prepared: Prepared, factor: float,
                    apart: np.ndarray) -> float | None:
    """The area (share of the photo) of a second card lying apart from `apart` (the found card and its holder,
    small-copy pixels: `card_faces.apart_from`), along one of the largest strong outlines beside it (half a card,
    its sleeve's edge lost on the surface past a line across it: `cards_along`) or round a part, whose face,
    straightened, shows at least PART_LAYOUT of its frame lines (a card's warm art and border on wood can share
    the wood's colours: every line in its place proves it all the same), or at least SECOND_LINES and its inside
    is printed; else None."""
    width, height = image.size
    h, w = prepared.lab.shape[:2]
    reach = apart.astype(np.float32)
    beside = [o for o in found if cv2.intersectConvexConvex(o.polygon.astype(np.float32), reach)[0] <= 0]
    along = [card for o in strong(beside)[:PART_LOOKS] for card in cards_along(o.polygon) if _readable(card, w, h)]
    for card in chain(along, (card for card, _ in _candidates(beside, prepared))):
        if not apart_from(card, reach):
            continue
        area = float(abs(cv2.contourArea(card.astype(np.float32))))
        corners = portrait_order(card) / factor / (width, height)
        face = np.asarray(warp_card(image, tuple(map(tuple, corners)), long_side=LAYOUT_SIZE[1]))  # type: ignore[arg-type]
        lines = read_layout(face)
        score = max(lines.score, lines.turned)
        if score >= PART_LAYOUT:  # (every line where it belongs: a card whatever the colours of its face)
            return area / (w * h)
        if score >= SECOND_LINES and _printed(card, prepared):
            return area / (w * h)
        if score >= SECOND_FIT:  # (off its place by a little: fitted to its lines)
            held = straighten(image, portrait_order(card / factor))
            moved = (held[2] * factor).astype(np.float32)
            if apart_from(moved, reach) and (held[3] >= PART_LAYOUT
                                             or (held[3] >= SECOND_LINES and _printed(moved, prepared))):
                return float(abs(cv2.contourArea(moved))) / (w * h)
    return None
