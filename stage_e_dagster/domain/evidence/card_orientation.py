"""Which way up a straightened card reads: upright, or turned half a turn.

The finder knows a card's long sides, so only "upright or upside down" is left. Three cues from the card's
layout, each signed (positive: upright as given), all read from a small portrait copy:

- the bottom border is deeper than the top one: the collector and legal lines sit on it, under the frame, while at
  the top the frame starts just inside the edge. Measured as the share of border-coloured pixels in the bottom
  strip against the top strip (the border's colour taken from the side borders at mid-height);
- the art (upper half) is more colourful than the text box (lower half);
- the text box is lighter than the art.

A borderless or unusual card gives weak cues; `margin` says how sure the answer is, so a reader that fails to read
an unsure card can try it the other way up.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

# The copy the cues are read from.
SMALL_SIZE = (180, 252)
_BORDER_DELTA = 22.0


@dataclass(frozen=True)
class Orientation:
    """The cues and their sum; `upright` when the sum is not negative."""

    border: float
    colour: float
    light: float

    @property
    def score(self) -> float:
        return 1.0 * self.border + 2.0 * self.colour + 3.0 * self.light

    @property
    def upright(self) -> bool:
        return self.score >= 0

    @property
    def margin(self) -> float:
        return abs(self.score)


def _rows(img: np.ndarray, top: float, bottom: float, left: float = 0.0, right: float = 1.0) -> np.ndarray:
    h, w = img.shape[:2]
    return img[round(top * h):max(round(bottom * h), round(top * h) + 1), round(left * w):max(round(right * w), 1)]


def _border_cue(lab: np.ndarray) -> float:
    """The bottom strip's share of the border's colour less the top strip's. The border's colour is read from the
    side borders at mid-height, at the card's very edge and a little further in (inside a sleeve the edge shows the
    sleeve's margin, alike at the top and the bottom): of the uniform ones, the colour that tells the two apart."""

    def share(colour: np.ndarray, top: float, bottom: float) -> float:
        strip = _rows(lab, top, bottom, 0.06, 0.94)
        return float(np.mean(np.linalg.norm(strip - colour, axis=2) < _BORDER_DELTA))

    cues = [0.0]  # no uniform side border (borderless, or art to the edge): no cue
    for inner, outer in ((0.008, 0.028), (0.028, 0.045)):
        sides = np.concatenate([_rows(lab, 0.3, 0.7, inner, outer).reshape(-1, 3),
                                _rows(lab, 0.3, 0.7, 1 - outer, 1 - inner).reshape(-1, 3)])
        colour = np.median(sides, axis=0)
        if float(np.median(np.linalg.norm(sides - colour, axis=1))) <= _BORDER_DELTA:
            cues.append(share(colour, 0.9, 0.985) - share(colour, 0.015, 0.1))
    return max(cues, key=abs)


def read_orientation(card_rgb: np.ndarray) -> Orientation:
    """The cues of a portrait card image (any size; it is reduced to SMALL_SIZE first)."""
    small = cv2.resize(card_rgb, SMALL_SIZE, interpolation=cv2.INTER_AREA)
    lab = cv2.cvtColor(small, cv2.COLOR_RGB2LAB).astype(np.float32)
    lab[..., 0] *= 100.0 / 255.0
    hsv = cv2.cvtColor(small, cv2.COLOR_RGB2HSV).astype(np.float32)
    upper, lower = (0.14, 0.5), (0.64, 0.86)
    saturation = (float(np.mean(_rows(hsv, *upper, 0.12, 0.88)[..., 1]))
                  - float(np.mean(_rows(hsv, *lower, 0.12, 0.88)[..., 1]))) / 255.0
    light = (float(np.mean(_rows(lab, *lower, 0.12, 0.88)[..., 0]))
             - float(np.mean(_rows(lab, *upper, 0.12, 0.88)[..., 0]))) / 100.0
    return Orientation(border=_border_cue(lab), colour=saturation, light=light)
