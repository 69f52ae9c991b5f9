"""The values Stage C produces: `Evidence` for a readable scan, `EvidenceSkip` for one that cannot be read."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

AMBIGUOUS_BORDER = "ambiguous"
"""The border band is not one uniform colour (a borderless printing, a busy scan background, damage): no claim."""


@dataclass
class Evidence:
    """Facts extracted from one card scan. Field names match the `image_evidence` columns.

    `extractor_versions` maps each extractor name (geometry, collector, legal, hashes, quality, card) to the version
    that produced its fields; a stored row is current only when it covers every current version.
    """

    width: int | None = None
    height: int | None = None
    aspect_ratio: float | None = None
    bleed_class: str | None = None  # "trimmed" | "bleed" | "ambiguous"
    border_color: str | None = None  # "black" | "white" | "silver" | "gold" | AMBIGUOUS_BORDER
    collector_raw: str | None = None
    collector_number: str | None = None
    set_code_raw: str | None = None
    set_code: str | None = None  # snapped to a known set code, else the raw token
    collector_total: int | None = None  # the printed total read with the number ("/274")
    collector_layout: str | None = None  # the layout read (`domain.printed_lines`): where the number was printed
    collector_star: bool | None = None
    """Whether the pixels show a star between a legal line's number and its slash ("123★/350": `star_mark`), or,
    where they cannot tell, what the recogniser's probabilities clearly show (`line_verify.star_seen`); None when
    neither tells, or the line prints no total."""
    collector_end_height: str | None = None
    """How tall the glyph before a legal line's slash stands (`star_mark.end_height`): "x-height" (a lower-case
    letter such as a suffix "a"), "full" (a digit, or a letter such as "b"); None when the pixels cannot tell or
    nothing asked (the name has no letter-suffix twin of the number read)."""
    language: str | None = None
    legal_raw: str | None = None
    copyright_year: int | None = None
    proxy_marker: bool | None = None
    art_phash: int | None = None  # 64-bit perceptual hash stored as a signed integer
    symbol_phash: int | None = None
    truncated: bool = False
    blur_variance: float | None = None
    entropy: float | None = None
    card_corners: list[float] | None = None
    """Where the card lies in the image: its corners as it reads (top-left, top-right, bottom-right, bottom-left),
    `x, y` each, normalised to the image (0..1), 8 numbers. A scan that already is the card has the image's own."""
    extractor_versions: dict[str, str] = field(default_factory=dict)
    content_sha256: str | None = None  # the bytes this was extracted from, when loaded from storage


@dataclass(frozen=True)
class EvidenceSkip:
    """A named reason a scan produced no evidence (`unreadable-image`, `truncated-image`, `too-large`, ...)."""

    reason: str
    detail: dict[str, Any] = field(default_factory=dict)


def flat_corners(corners: tuple[tuple[float, float], ...]) -> list[float]:
    """Four `(x, y)` corners as the 8 numbers `Evidence.card_corners` holds."""
    return [round(float(v), 6) for corner in corners for v in corner]


def corner_pairs(flat: list[float] | tuple[float, ...] | None) -> tuple[tuple[float, float], ...] | None:
    """`Evidence.card_corners` as four `(x, y)` corners (None for none stored)."""
    if flat is None or len(flat) != 8:
        return None
    return tuple((float(flat[i]), float(flat[i + 1])) for i in range(0, 8, 2))


def is_whole_image(flat: list[float] | tuple[float, ...] | None) -> bool:
    """Whether stored corners are the image's own (a scan that already is the card), or none are stored."""
    return flat is None or list(map(float, flat)) == [0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0]
