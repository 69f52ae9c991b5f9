"""What the text of a card's legal line says: its copyright year, whether it marks a proxy, and whether reads of a
line saw an artist's credit alone. The collector line's parser (`parse`) finds where a legal line ends by the same
words."""

from __future__ import annotations

import re
from collections.abc import Iterable

# What marks a legal line ("™ & © 2012 Wizards of the Coast", "© 1999 Wizards of the Coast, Inc.", some years "LLC").
LEGAL_WORDS = re.compile(r"wi[zs2]ards|coast|\binc\b\.?|\bllc\b|©|\(c\)|™", re.IGNORECASE)
_YEAR_ANCHORED = re.compile(r"(?:©|\(c\)|\(C\)|copyright|@|\bC\)|\bO\s)\s*((?:19|20)\d\d)", re.IGNORECASE)
_RANGE_END = re.compile(r"\s*[-–~]\s*((?:19|20)\d\d)(?!\d)")
_YEAR_ANY = re.compile(r"(?<!\d)((?:19|20)\d\d)(?!\d)")
_PROXY_MARKERS = re.compile(r"not\s*for\s*sale|pro[xk]y|play\s*test", re.IGNORECASE)


def parse_copyright_year(text: str, current_year: int) -> int | None:
    """The copyright year in legal-line text, preferring one anchored to ©/(c)/copyright; 1993..current+1. A range
    ("© 1993-2003", printed by the core sets of the 2003 frame) stands for its last year."""
    for pattern in (_YEAR_ANCHORED, _YEAR_ANY):
        for match in pattern.finditer(text):
            year = int(match.group(1))
            if 1993 <= year <= current_year + 1:
                until = _RANGE_END.match(text, match.end())
                if until and year < int(until.group(1)) <= current_year + 1:
                    return int(until.group(1))
                return year
    return None


def credit_only(texts: Iterable[str]) -> bool:
    """Whether reads of a line saw only an artist credit: no digit (so no year) and no word of a legal line. Such
    reads are all the line's evidence; reads that saw "of the Coast, Inc." but no digit cut a year off."""
    return not any(ch.isdigit() for text in texts for ch in text) and not any(
        LEGAL_WORDS.search(text) or _PROXY_MARKERS.search(text) for text in texts)


def has_proxy_marker(text: str) -> bool:
    """Whether legal-line text says the card is a proxy ("not for sale", "proxy", "playtest")."""
    return bool(_PROXY_MARKERS.search(text))
