"""Numbers read from outside (an HTTP header, a query parameter, a path segment): ASCII digits only, within range.

`str.isdigit` says yes to `²` and other digits `int` refuses, and `int` takes signs, spaces, underscores and any
length; a number from a peer or a browser is read here instead, and anything else is None, never an exception.
"""

from __future__ import annotations

import re

MAX_BIGINT = 2**63 - 1
_DIGITS = re.compile(r"[0-9]{1,19}")


def parse_count(text: str | None, maximum: int = MAX_BIGINT) -> int | None:
    """`text` as a whole number from 0 to `maximum` (plain ASCII digits, nothing else), or None."""
    if text is None or not _DIGITS.fullmatch(text):
        return None
    value = int(text)
    return value if value <= maximum else None
