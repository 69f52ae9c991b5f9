"""Half a number: whether a collector-number reading could be a piece of another printing's number.

OCR loses what is small and at the edge of a line: a digit ("27" read for "270"), a star or suffix ("261%/383" for
"261★/383"), a prefix. It also finds numbers where a copyright year stands ("199" from "© 1993-2000"). A reading
that matches one printing exactly is then still no proof: another printing of the same name may carry the number
the reading is a piece of. The reader (`read_catalog.resolve`) and the join-key calculator both ask the same
question here, with what else they know (a set code, the printed total, the year, the layout) to narrow the
printings that could have been meant; only a reading that singles out one of them may confirm or vote.

Numbers here are normalised (`parse.normalise_collector_number`: "0123" -> "123", "12★" -> "12*", "A-12" -> "a12").
"""

from __future__ import annotations

import re
from collections.abc import Iterable

TRUNCATION = "possible-truncation"
SUFFIX = "suffix-sibling"
YEAR = "number-from-year"
"""The reasons a reading does not single out a printing (also the join-key calculator's abstention reasons)."""

_PARTS = re.compile(r"^(?P<prefix>[a-z]*)(?P<digits>\d*)(?P<suffix>.*)$")
_YEAR = re.compile(r"(?<!\d)(?:19|20)\d\d(?!\d)")


def parts(number: str) -> tuple[str, str, str]:
    """(prefix letters, digits, suffix) of a normalised number: "a12" -> ("a", "12", ""), "261*" -> ("", "261",
    "*"), "12s" -> ("", "12", "s")."""
    match = _PARTS.match(number)
    if match is None:  # pragma: no cover - the pattern matches every string
        return "", number, ""
    return match.group("prefix"), match.group("digits"), match.group("suffix")


def rivalry(read: str, other: str) -> str | None:
    """How a reading `read` could stand for a printing numbered `other` although the two differ: `SUFFIX` when
    they differ in a suffix or star only (lost or invented), `TRUNCATION` when the reading's digits are a proper
    prefix or suffix of the other's (a digit lost at either end) or it lost the other's prefix; None when they are
    equal or unrelated."""
    if read == other or not read or not other:
        return None
    read_prefix, read_digits, read_suffix = parts(read)
    prefix, digits, suffix = parts(other)
    if not read_digits or not digits:
        return None
    if read_digits == digits:
        if read_prefix == prefix:
            return SUFFIX
        return TRUNCATION if not read_prefix and read_suffix == suffix else None
    if read_prefix == prefix and read_suffix == suffix and len(digits) > len(read_digits) and (
            digits.startswith(read_digits) or digits.endswith(read_digits)):
        return TRUNCATION
    return None


def starred(read: str, star: bool | None) -> str:
    """A normalised reading with the star the pixels showed (`Evidence.collector_star`): "261" with a star seen is
    "261*", "261*" with none seen is "261"; unchanged when they could not tell or the reading has another suffix."""
    prefix, digits, suffix = parts(read)
    if star is True and suffix == "" and digits:
        return f"{read}*"
    if star is False and suffix == "*":
        return read[:-1]
    return read


def star_twins(read: str, other: str) -> bool:
    """Whether two normalised numbers differ in a star alone ("261" and "261*"): the twins OCR cannot tell apart but
    the glyph before a legal line's slash can (`star_mark`)."""
    return read != other and read.rstrip("*") == other.rstrip("*") and \
        parts(read)[2] in ("", "*") and parts(other)[2] in ("", "*")


def star_told(read: str, other: str, star: bool | None) -> bool:
    """Whether the pixels' star (`Evidence.collector_star`, not None) tells `read` from `other`: star twins, which
    OCR cannot witness but the glyph before the slash can."""
    return star is not None and star_twins(read, other)


X_HEIGHT, FULL = "x-height", "full"
"""How tall the glyph before a legal line's slash stands (`Evidence.collector_end_height`): a lower-case letter
without ascender, or a digit or a letter with one."""
_X_HEIGHT_ENDS = frozenset("acemnorsuvwxz")
_FULL_ENDS = frozenset("0123456789bdfhklt")


def _end_height(number: str) -> str | None:
    """How tall a normalised number's last glyph stands: `X_HEIGHT`, `FULL`, or None (a descender, a star)."""
    last = number[-1:]
    return X_HEIGHT if last in _X_HEIGHT_ENDS else FULL if last in _FULL_ENDS else None


def letter_twins(read: str, other: str) -> bool:
    """Whether two normalised numbers differ in a letter suffix alone ("30a" and "30b", "24" and "24a")."""
    read_prefix, read_digits, read_suffix = parts(read)
    prefix, digits, suffix = parts(other)
    return read != other and (read_prefix, read_digits) == (prefix, digits) and bool(read_digits) and \
        all(len(s) <= 1 and (s == "" or s.isalpha()) for s in (read_suffix, suffix))


def height_told(read: str, other: str, height: str | None) -> bool:
    """Whether the height of the glyph before the slash (`Evidence.collector_end_height`, not None) tells `read`
    from `other`: letter twins whose last glyphs stand at different heights, `read`'s the height the pixels show
    ("30a" at x-height against "30b" at full height)."""
    return height is not None and letter_twins(read, other) and _end_height(read) == height and \
        _end_height(other) not in (None, height)


def from_year(read: str, texts: Iterable[str | None], year: int | None = None) -> bool:
    """Whether the digits of a reading (of two digits or more) are a piece of a year the card prints, in `texts`
    (the raw OCR text) or `year` (the copyright year read): such a number may be the year, misread."""
    digits = parts(read)[1]
    if len(digits) < 2:
        return False
    years = {str(year)} if year else set()
    for text in texts:
        years.update(_YEAR.findall(text or ""))
    return any(digits in found for found in years)
