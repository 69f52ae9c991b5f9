"""What the card finder answers: the card found (`FoundCard`), or why no single whole card could be isolated
(`CardNotFound`, one of `SKIP_REASONS`)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from PIL import Image

from stage_e_dagster.domain.evidence.load import LoadedScan
from stage_e_dagster.domain.evidence.model import EvidenceSkip

SCAN = "scan"
PHOTO = "photo"
SEVERAL_CARDS = "photo-several-cards"
CARD_CUT_OFF = "photo-card-cut-off"
CARD_TOO_SMALL = "photo-card-too-small"
NO_CARD = "photo-card-not-found"
SKIP_REASONS = (SEVERAL_CARDS, CARD_CUT_OFF, CARD_TOO_SMALL, NO_CARD)

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
