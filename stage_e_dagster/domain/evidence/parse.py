"""Pure text parsing of OCR output: the collector line (number, set code, language) and the legal line.

Set codes come back from OCR in upper case with look-alike errors (OTJ -> OT], FDN -> FON); `snap_set_code`
maps a raw token onto the one known catalogue code it can only have meant, and refuses when two are plausible.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field

RARITY_LETTERS = frozenset("CURMSTL")
LANGUAGES = frozenset({"EN", "DE", "FR", "IT", "ES", "PT", "JA", "JP", "KO", "RU", "CS", "CT", "ZHS", "ZHT"})
STAR = "★"
# OCR look-alikes folded to one canonical character before codes are compared.
_CONFUSIONS = str.maketrans(
    {"]": "J", "[": "I", "|": "I", "!": "I", "0": "O", "Q": "O", "1": "I", "5": "S", "$": "S",
     "8": "B", "2": "Z", "6": "G", "€": "E"}
)
_STAR_CHARS = "★☆*✶✱⭑"
_NUMBER_WITH_TOTAL = re.compile(
    rf"(?P<star>[{_STAR_CHARS}])?\s*(?P<num>\d{{1,4}})(?P<suffix>[a-zA-Z])?\s*[/⁄∕|Il]\s*(?P<total>\d{{1,4}})"
)
_NUMBER_ALONE = re.compile(rf"(?<![\w/])(?P<star>[{_STAR_CHARS}])?\s*(?P<num>\d{{1,4}})(?P<suffix>[a-zA-Z])?(?![\w/])")
_TOKEN = re.compile(r"[A-Za-z0-9\]\[|$€]{2,8}")
_SEPARATORS = re.compile(r"[•·∙●◦°«»,;:_~\-–—+=*#%&^\"'`]")
_YEAR_ANCHORED = re.compile(r"(?:©|\(c\)|\(C\)|copyright|@|\bC\)|\bO\s)\s*((?:19|20)\d\d)", re.IGNORECASE)
_YEAR_ANY = re.compile(r"(?<!\d)((?:19|20)\d\d)(?!\d)")
_PROXY_MARKERS = re.compile(r"not\s*for\s*sale|pro[xk]y|play\s*test", re.IGNORECASE)


@dataclass(frozen=True)
class CollectorParse:
    """What a collector-line OCR text says: number, candidate set tokens (best first), language."""

    number: str | None = None
    total: int | None = None
    rarity: str | None = None
    set_tokens: tuple[str, ...] = ()
    language: str | None = None
    has_second_line: bool = False
    lines: tuple[str, ...] = field(default_factory=tuple)

    @property
    def set_token(self) -> str | None:
        """The most likely raw set-code token."""
        return self.set_tokens[0] if self.set_tokens else None


def fold(code: str) -> str:
    """A code in canonical look-alike form: upper case with confusable characters folded together."""
    return code.replace("l", "I").upper().translate(_CONFUSIONS)


def levenshtein(a: str, b: str, limit: int = 2) -> int:
    """Edit distance between two short strings, capped at `limit` + 1."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return min(previous[-1], limit + 1)


def snap_set_code(raw: str, known: Collection[str]) -> str | None:
    """The known code (lower case) `raw` must have meant, or None when none or several are plausible.

    In order: an exact case-insensitive match; exactly one code equal after folding look-alikes (] -> J, 0 -> O,
    1 -> I, 5 -> S, 8 -> B, ...); exactly one code within one edit after folding.
    """
    if not raw:
        return None
    lowered = raw.lower()
    known_lower = {code.lower() for code in known}
    if lowered in known_lower:
        return lowered
    folded = fold(raw)
    same = [code for code in known_lower if fold(code) == folded]
    if len(same) == 1:
        return same[0]
    if len(same) > 1:
        return None
    near = [code for code in known_lower if levenshtein(fold(code), folded, limit=1) <= 1]
    return near[0] if len(near) == 1 else None


def snap_first(tokens: Iterable[str], known: Collection[str]) -> tuple[str | None, str | None]:
    """(raw token, snapped code) for the first token that snaps, else (first token with a letter, None)."""
    tokens = list(tokens)
    for token in tokens:
        snapped = snap_set_code(token, known)
        if snapped is not None:
            return token, snapped
    return next((t for t in tokens if _has_letter(t)), None), None


def _has_letter(token: str) -> bool:
    return any(ch.isalpha() for ch in token.replace("]", "J"))


def _clean_lines(text: str) -> list[str]:
    return [line.strip() for line in text.replace("\r", "\n").split("\n") if line.strip()]


def _number_from(line: str, with_total: bool) -> tuple[str | None, int | None, str | None]:
    """(collector number, printed total, rarity letter) on one line: "n/total" forms, or a lone number."""
    match = (_NUMBER_WITH_TOTAL if with_total else _NUMBER_ALONE).search(line)
    if not match:
        return None, None, None
    total = int(match.group("total")) if with_total else None
    rest = line[match.end() :]
    suffix = match.group("suffix") or ""
    rarity: str | None = None
    if suffix and (suffix.isupper() and suffix in RARITY_LETTERS and not total):
        rarity, suffix = suffix, ""
    number = match.group("num").lstrip("0") or "0"
    number = (STAR if match.group("star") else "") + number + suffix.lower()
    if rarity is None:
        letters = re.findall(r"\b([A-Z])\b", rest)
        rarity = letters[0] if letters and letters[0] in RARITY_LETTERS else None
    return number, total, rarity


def _set_tokens(line: str) -> tuple[list[str], str | None]:
    """Candidate set-code tokens on a line (best first) and the language marker if present."""
    spaced = _SEPARATORS.sub(" ", line)
    tokens = _TOKEN.findall(spaced)
    language: str | None = None
    candidates: list[str] = []
    for token in tokens:
        upper = token.upper()
        if upper in LANGUAGES:
            language = language or upper
            continue
        glued = next((lang for lang in ("EN",) if upper.endswith(lang) and 3 <= len(upper) - len(lang) <= 5), None)
        options = [token[: -len(glued)], token] if glued else [token]
        if glued and language is None:
            language = glued
        for option in options:
            if 3 <= len(option) <= 5 and _has_letter(fold(option)):
                candidates.append(option)
    # Tokens read as digits only (S02 -> 502) may still snap, but only after every lettered one.
    candidates.sort(key=lambda token: not _has_letter(token))
    return candidates, language


def parse_collector(text: str) -> CollectorParse:
    """Parse collector-line OCR text such as "123/280 R\\nM20 • EN" (the number is never the total)."""
    lines = _clean_lines(text)
    number: str | None = None
    total: int | None = None
    rarity: str | None = None
    index = -1
    for with_total in (True, False):
        for i, line in enumerate(lines):
            number, total, rarity = _number_from(line, with_total)
            if number is not None:
                index = i
                break
        if index >= 0:
            break
    following = lines[index + 1 :] if index >= 0 else lines
    tokens: list[str] = []
    language: str | None = None
    for line in following:
        found, lang = _set_tokens(line)
        tokens += found
        language = language or lang
    if index >= 0 and not tokens:
        # OCR sometimes merges the two lines; look after the number on its own line.
        found, lang = _set_tokens(_NUMBER_WITH_TOTAL.sub(" ", lines[index]))
        tokens, language = found, language or lang
    return CollectorParse(
        number=number,
        total=total,
        rarity=rarity,
        set_tokens=tuple(tokens),
        language=language,
        has_second_line=bool(following),
        lines=tuple(lines),
    )


def parse_copyright_year(text: str, current_year: int) -> int | None:
    """The copyright year in legal-line text, preferring one anchored to ©/(c)/copyright; 1993..current+1."""
    for pattern in (_YEAR_ANCHORED, _YEAR_ANY):
        for match in pattern.finditer(text):
            year = int(match.group(1))
            if 1993 <= year <= current_year + 1:
                return year
    return None


def has_proxy_marker(text: str) -> bool:
    """Whether legal-line text says the card is a proxy ("not for sale", "proxy", "playtest")."""
    return bool(_PROXY_MARKERS.search(text))
