"""What a card's own printing proves about an outline, read on its straightened face (`card_layout`).

- `around_art_box`: an outline that is a card's art box (nearly a card's proportions turned a quarter, with strong
  straight sides) gives the card round it, when that card lies whole in the photo, its edges are seen and its face
  shows its frame lines where they belong;
- `another_outline`: when the chosen outline's face shows too few of its lines, another card-like outline over the
  same card (its holder, the card inside the holder, the card round a frame taken for it) whose face shows them is
  the card;
- `round_frame`: an outline on a card's frame inside a border the colour of the surface (a black border on a black
  cloth) shows its frame's own sides at the very edge of its straightened copy, where no line can be seen, and the
  lines cannot be fitted back; straightened a little larger, it shows them, and the fit moves its corners out to
  the card's edges;
- `second_card`: a card-like outline apart from the found card whose face shows a card's frame lines is a second
  card, however much smaller or fainter than the first: the photo is of several cards.

`LAYOUT_MIN` (`card_layout`) is the share of the frame lines a whole card's face shows; below it an outline is a
part of a card, a guess, or off by more than the lines can be fitted back.
"""

from __future__ import annotations

from collections.abc import Callable

import cv2
import numpy as np
from PIL import Image

from stage_e_dagster.domain import layout
from stage_e_dagster.domain.evidence.card_layout import LAYOUT_MIN as LAYOUT_MIN
from stage_e_dagster.domain.evidence.card_layout import SIZE as LAYOUT_SIZE
from stage_e_dagster.domain.evidence.card_layout import read_layout
from stage_e_dagster.domain.evidence.card_lines import side_support
from stage_e_dagster.domain.evidence.card_outline import Outline
from stage_e_dagster.domain.evidence.card_straighten import portrait_order, straighten, warp_card

# A card guessed round its art box has its sides on edges: their mean support at least the first, the weakest's at
# least the second (as a card-like outline's).
EDGES_SEEN = (0.72, 0.45)
# The largest card-like outlines apart from the found card whose faces are read for a second card's frame lines.
SECOND_LOOKS = 3
# A second card's face showing at least this share of its frame lines, short of `LAYOUT_MIN`, is straightened and
# its corners fitted to them before it is judged (an outline or a part puts the card round it a little off its place).
SECOND_FIT = 0.8
# The card-like outlines over the chosen one whose faces are read when its own face shows too few lines.
OTHER_LOOKS = 3
# An outline whose face shows too few lines is straightened this much larger on every side (share of its sides):
# a frame's own sides inside a border then lie inside the copy, not on its edge.
FRAME_GROW = 0.03
# The outline's corners lie inside the card found round it, to this share of the card's sides.
FRAME_HELD = 0.005
# A second card may graze the found card's reach (the card grown by a holder's margin) by this share of its own
# area: turned beside the first, its corner can cross the reach's corner, while an outline or guess over the found
# card (its art box, its holder's margin) lies mostly inside it.
SECOND_GRAZE = 0.02
# The art box's share of the card's area (`layout.ART_BOX`).
ART_BOX_AREA = (layout.ART_BOX[2] - layout.ART_BOX[0]) * (layout.ART_BOX[3] - layout.ART_BOX[1])


def second_card(image: Image.Image, found: list[Outline], card: np.ndarray, factor: float, holder_reach: float,
                min_area: float) -> float | None:
    """The area of a second card beside the found one (at `card`, small-copy pixels), or None: a card-like outline
    apart from the card (and its holder: the card grown by `holder_reach`; `apart_from`), at least `min_area`,
    whose face, straightened, shows a card's frame lines where they belong (or, showing SECOND_FIT of them, once
    its corners are fitted to them, still apart). Smaller or fainter than the finder counts as a rival, it is still
    a card, proved by its own printing."""
    centre = card.mean(axis=0)
    reach = (centre + (card - centre) * holder_reach).astype(np.float32)
    apart = [o for o in found if o.card_like and o.area >= min_area and apart_from(o.polygon, reach)]
    width, height = image.size
    for o in sorted(apart, key=lambda o: -o.area)[:SECOND_LOOKS]:
        corners = portrait_order(o.polygon) / factor / (width, height)
        face = np.asarray(warp_card(image, tuple(map(tuple, corners)), long_side=LAYOUT_SIZE[1]))  # type: ignore[arg-type]
        lines = read_layout(face)
        score = max(lines.score, lines.turned)
        if score >= LAYOUT_MIN:
            return o.area
        if score >= SECOND_FIT:  # (its outline a little off the card: fitted to its lines)
            held = straighten(image, portrait_order(o.polygon / factor))
            moved = held[2] * factor
            if held[3] >= LAYOUT_MIN and apart_from(moved, reach):
                return o.area
    return None


def apart_from(polygon: np.ndarray, reach: np.ndarray) -> bool:
    """Whether a convex `polygon` lies apart from the found card's `reach`, grazing it by at most SECOND_GRAZE of its
    own area."""
    shape = polygon.astype(np.float32)
    return cv2.intersectConvexConvex(shape, reach.astype(np.float32))[0] <= SECOND_GRAZE * abs(cv2.contourArea(shape))


def another_outline(image: Image.Image, others: list[np.ndarray],
                    settled: Callable[[np.ndarray], np.ndarray]) -> tuple[Image.Image, float, np.ndarray, float] | None:
    """The card among `others` (card-like outlines over the chosen one, small-copy pixels, inner ones first), read
    when the chosen outline's face shows too few of its frame lines: the first OTHER_LOOKS are `settled` (to
    full-image pixels) and straightened, and the one whose face shows the most lines, at least LAYOUT_MIN, is the
    card. Inside a sleeve the card's frame inside a dark border can pass for the card (nested, in truer proportions
    than the card's own outline), or the sleeve's edge for the card's: the face, not the outline's shape, says
    which is the card."""
    best = None
    for polygon in others[:OTHER_LOOKS]:
        found = straighten(image, portrait_order(settled(polygon)))
        if found[3] >= LAYOUT_MIN and (best is None or found[3] > best[3]):
            best = found
    return best


def round_frame(image: Image.Image, quad: np.ndarray) -> tuple[Image.Image, float, np.ndarray, float] | None:
    """The card round an outline (full-image pixels, portrait order) that lay on its frame inside its border: the
    outline grown by FRAME_GROW on every side (perspective kept), straightened, its corners fitted to the card's
    edges by its frame lines; kept when it lies inside the photo, holds the outline and its face shows at least
    LAYOUT_MIN of them."""
    unit = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float32)
    g = FRAME_GROW
    larger = np.array([[[-g, -g], [1 + g, -g], [1 + g, 1 + g], [-g, 1 + g]]], np.float32)
    grown = cv2.perspectiveTransform(larger, cv2.getPerspectiveTransform(unit, quad.astype(np.float32)))[0]
    if np.any(grown < 0) or np.any(grown > np.array(image.size, np.float32)):
        return None
    found = straighten(image, grown.astype(np.float64))
    if found[3] < LAYOUT_MIN:
        return None
    # The card round its frame holds the frame: a fit that moved a side in past the outline shifted the lines onto
    # other lines, it did not find the card's edges.
    to_card = cv2.getPerspectiveTransform(found[2].astype(np.float32), unit)
    inside = cv2.perspectiveTransform(quad[None].astype(np.float32), to_card)[0]
    return found if np.all(inside >= -FRAME_HELD) and np.all(inside <= 1 + FRAME_HELD) else None


def edges_seen(quad: np.ndarray, gradient: np.ndarray) -> bool:
    """Whether a quad's four sides (small-copy pixels) lie on strong edges, as a card-like outline's do."""
    supports = [side_support(gradient, quad[i], quad[(i + 1) % 4]) for i in range(4)]
    return float(np.mean(supports)) >= EDGES_SEEN[0] and min(supports) >= EDGES_SEEN[1]


def around_art_box(image: Image.Image, quad: np.ndarray,
                    seen: Callable[[np.ndarray], bool]) -> tuple[Image.Image, float, np.ndarray, float] | None:
    """The card an outline is the art box of, straightened, when that card lies whole in the photo, its edges are
    `seen` there, and it shows nearly all its frame lines where they belong (LAYOUT_MIN). A card's art box
    (53.5 x 38.7 mm) is nearly a card's proportions turned a quarter, with strong straight sides, so it can stand
    for the card; the card lies round it where `layout` puts it, the art box's long sides across the card, the
    name above it or below (both are tried)."""
    best = None
    for card in _cards_round(quad):
        if np.any(card < 0) or np.any(card > np.array(image.size, np.float64)) or not seen(card):
            continue
        found = straighten(image, card)
        if found[3] >= LAYOUT_MIN and (best is None or found[3] > best[3]):
            best = found
    return best


def art_box_runs_off(quad: np.ndarray, size: tuple[int, int], seen: Callable[[np.ndarray], bool]) -> bool:
    """Whether the card an outline would be the art box of runs off a photo of `size` (w, h), either way up, with
    its sides inside the photo `seen` on edges: the outline is then a part of a card cut off by the frame (its art
    box, found whole away from the frame's edge), not a card too small or none at all (round a small card on the
    surface, the sides of a card it would be the art box of lie on the surface)."""
    limit = np.array(size, np.float64)
    return any((np.any(card < 0) or np.any(card > limit)) and seen(card) for card in _cards_round(quad))


def edges_seen_inside(quad: np.ndarray, gradient: np.ndarray) -> bool:
    """`edges_seen` for a quad that may run off the image: each side's part inside it (`inside_parts`), and at
    least two such parts."""
    supports = [side_support(gradient, *part) for part in inside_parts(quad, gradient.shape) if part is not None]
    return len(supports) >= 2 and float(np.mean(supports)) >= EDGES_SEEN[0] and min(supports) >= EDGES_SEEN[1]


def inside_parts(quad: np.ndarray, shape: tuple[int, ...]) -> list[tuple[np.ndarray, np.ndarray] | None]:
    """Each side's part (its two ends) inside an image of `shape` (h, w), or None for a side under a fifth of
    which lies inside it: a side off the image."""
    h, w = shape[:2]
    found: list[tuple[np.ndarray, np.ndarray] | None] = []
    for i in range(4):
        a, b = quad[i], quad[(i + 1) % 4]
        t = np.linspace(0.0, 1.0, 101)
        pts = a + t[:, None] * (b - a)
        inside = np.flatnonzero((pts[:, 0] >= 2) & (pts[:, 0] <= w - 3) & (pts[:, 1] >= 2) & (pts[:, 1] <= h - 3))
        found.append((pts[inside[0]], pts[inside[-1]]) if len(inside) >= 20 else None)
    return found


def _cards_round(quad: np.ndarray) -> list[np.ndarray]:
    """The cards (4 x 2, clockwise) an outline would be the art box of: its long sides across the card, the name
    above it or below (`layout.ART_BOX`)."""
    box = layout.ART_BOX
    art = np.array([[box[0], box[1]], [box[2], box[1]], [box[2], box[3]], [box[0], box[3]]], np.float32)
    unit = np.array([[[0, 0], [1, 0], [1, 1], [0, 1]]], np.float64)
    cards = []
    for turn in range(4):
        q = np.roll(quad, -turn, axis=0)
        if np.linalg.norm(q[1] - q[0]) < np.linalg.norm(q[2] - q[1]):  # the art box's top is a long side
            continue
        cards.append(cv2.perspectiveTransform(unit, cv2.getPerspectiveTransform(art, q.astype(np.float32)))[0])
    return cards
