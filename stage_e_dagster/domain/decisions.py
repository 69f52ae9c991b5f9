"""What a Stage D calculator concludes about a card: a `Vote` or a named `Abstention`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


def check_vote_shape(printing_id: int | None, is_no_match: bool) -> None:
    """The rule every vote obeys (and `card_printing_tag`'s CHECK): it names a printing or is a no-match."""
    if (printing_id is None) != is_no_match:
        raise ValueError("a vote names a printing or is a no-match, exactly one of the two")


@dataclass(frozen=True)
class Vote:
    """A vote for a printing, or a no-match vote (`printing_id` None and `is_no_match` True)."""

    card_id: int
    anonymous_id: str
    printing_id: int | None
    is_no_match: bool = False
    confidence: float = 0.0
    source: str = "ocr"

    def __post_init__(self) -> None:
        check_vote_shape(self.printing_id, self.is_no_match)


@dataclass(frozen=True)
class Abstention:
    """A calculator's named reason for casting no vote (`card_scan_log.skip_reason`)."""

    card_id: int
    anonymous_id: str
    skip_reason: str
    detail: dict[str, Any] = field(default_factory=dict)
