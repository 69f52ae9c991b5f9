"""The values Stage C produces: `Evidence` for a readable scan, `EvidenceSkip` for one that cannot be read."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

AMBIGUOUS_BORDER = "ambiguous"
"""The border band is not one uniform colour (a borderless printing, a busy scan background, damage): no claim."""


@dataclass
class Evidence:
    """Facts extracted from one card scan. Field names match the `image_evidence` columns.

    `extractor_versions` maps each extractor name (geometry, collector, legal, hashes, quality) to the version
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
    language: str | None = None
    legal_raw: str | None = None
    copyright_year: int | None = None
    proxy_marker: bool | None = None
    art_phash: int | None = None  # 64-bit perceptual hash stored as a signed integer
    symbol_phash: int | None = None
    truncated: bool = False
    blur_variance: float | None = None
    entropy: float | None = None
    extractor_versions: dict[str, str] = field(default_factory=dict)
    content_sha256: str | None = None  # the bytes this was extracted from, when loaded from storage


@dataclass(frozen=True)
class EvidenceSkip:
    """A named reason a scan produced no evidence (`unreadable-image`, `truncated-image`, `too-large`, ...)."""

    reason: str
    detail: dict[str, Any] = field(default_factory=dict)
