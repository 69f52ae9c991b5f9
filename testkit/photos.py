"""Drawn phone photos of rendered cards as scan files (`demo.photo`), at a phone's size, with their truth.

`photo_file` writes one photo of a catalogue card (a single card, several cards, a card cut off or too small) and
returns what was drawn: the card's true corners, normalised to the photo, and what the card finder must answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stage_e_dagster.demo.photo import DrawnPhoto, draw_photo, plan_photo
from stage_e_dagster.demo.render import render_scan

PHOTO_LONG_SIDE = 3000
"""A phone photo's size (3000-4000 px); Stage C decodes it at 2000 px, where a card at a third of the photo is about
700 px tall. Smaller photos leave the collector line a few pixels high."""
CARD_LONG_SIDE = 900


@dataclass(frozen=True)
class PhotoFile:
    """A photo written to `path`: the catalogue card it shows (the first, for several) and the drawing's truth."""

    path: Path
    card: dict[str, Any]
    drawn: DrawnPhoto

    @property
    def expected(self) -> str:
        """`found`, or the skip reason the photo must get."""
        return self.drawn.expected


def photo_file(path: Path, card: dict[str, Any], case: str, seed: int, other: dict[str, Any] | None = None,
               long_side: int = PHOTO_LONG_SIDE) -> PhotoFile:
    """A JPEG photo of `card` (`case`: single, several, cut-off or too-small, `demo.photo.CASES`) drawn from `seed`,
    written to `path`; `other` is the second card of a photo of several."""
    face = render_scan(card, long_side=CARD_LONG_SIDE, seed=seed)
    others = (render_scan(other, long_side=CARD_LONG_SIDE, seed=seed + 1),) if other is not None else ()
    drawn = draw_photo(face, plan_photo(seed, case, long_side=long_side), others)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(drawn.jpeg())
    return PhotoFile(path, card, drawn)
