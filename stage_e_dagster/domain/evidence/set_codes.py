"""Set codes as OCR reads them: folded to one form for look-alike characters (0 and O, 1 and I, ] and J), compared
by edit distance, and snapped to the code of a known set the reading must have meant."""

from __future__ import annotations

from collections.abc import Collection, Iterable

# OCR look-alikes folded to one canonical character before codes are compared.
_CONFUSIONS = str.maketrans(
    {"]": "J", ")": "J", "[": "I", "|": "I", "!": "I", "0": "O", "Q": "O", "1": "I", "5": "S", "$": "S",
     "8": "B", "2": "Z", "6": "G", "€": "E"}
)


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
    return next((t for t in tokens if has_letter(t)), None), None


def has_letter(token: str) -> bool:
    """Whether a token holds a letter ("]" is how OCR reads a J)."""
    return any(ch.isalpha() for ch in token.replace("]", "J"))
