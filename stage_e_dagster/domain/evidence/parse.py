"""Pure text parsing of OCR output: the collector block (number, total, rarity, set-code tokens, language), in
every layout real cards print (`domain.printed_lines`):

- modern: "123/280 R" over "M20 • EN ✎ Anna Chen" (any language marker: "M20 • DE"; a premium print's star in
  place of the bullet);
- rarity first (2023 on): "C 0172" over "DSK • EN ✎ Anna Chen": the rarity letter, then four digits, no total;
- legal number (2003 frame) and centred (1997 frame): "✎ Anna Chen" or "Illus. Anna Chen" over "™ & © 2012
  Wizards of the Coast 174/274": the number is the one after the legal text, never a year or a piece of one;
- none at all on the oldest cards (a credit and a copyright year).

The parser takes the number from the number line only, with a prefix ("A12", "A-12"), a letter suffix ("12a",
"12s") or a star either side ("★12", "12★"), never a lone digit next to the artist credit (often the paintbrush
misread) nor a number standing where the copyright year does, and takes set-code candidates only from before the
language marker, never from the words of the artist credit. Token sets have codes of their own ("TM20") and read
like any other code.

Set codes come back in upper case with look-alike errors (OTJ -> OT]): `set_codes.snap_set_code` maps a raw token onto
the one known code it can only have meant, or refuses. The legal line's year and proxy markers: `legal_text`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from stage_e_dagster.domain.evidence.legal_text import LEGAL_WORDS
from stage_e_dagster.domain.evidence.set_codes import fold, has_letter, levenshtein
from stage_e_dagster.domain.printed_lines import LEGAL_NUMBER, MODERN, RARITY_FIRST

RARITY_LETTERS = frozenset("CURMSTL")
LANGUAGES = frozenset({"EN", "DE", "FR", "IT", "ES", "PT", "JA", "JP", "KO", "RU", "CS", "CT", "ZHS", "ZHT", "HE", "LA",
                       "AR", "PH"})
STAR = "★"
_STAR_CHARS = "★☆*✶✱⭑%"  # "%" is how OCR reads a small star
_SLASHES = "/⁄∕|Il,"  # a comma is how OCR reads a thin slash in small type ("72,238")
# A number may carry a one- or two-letter upper-case prefix ("A12", "A-12") and a star before or after it ("12★").
_PREFIX = r"(?:(?<![\w/])(?P<prefix>[A-Z]{1,2})-?(?=\d))?"
_PREFIX_ALONE = _PREFIX.replace("{1,2}", "")  # a lone number takes one letter: "XL9" is a set code, never a number
# OCR reads a small star before the slash as a symbol no collector line prints there ("205#/269", "117€/344").
_NUMBER_WITH_TOTAL = re.compile(
    rf"(?P<star>[{_STAR_CHARS}])?\s*{_PREFIX}(?P<num>\d{{1,4}})(?P<suffix>[a-zA-Z])?(?P<star_after>[★☆✶✱⭑*%#¢€])?"
    rf"\s*[{_SLASHES}]\s*(?P<total>\d{{1,4}})(?!\d)"
)
_NUMBER_ALONE = re.compile(
    rf"(?<![\w/])(?P<star>[{_STAR_CHARS}])?\s*{_PREFIX_ALONE}(?P<num>\d{{1,4}})(?P<suffix>[a-zA-Z])?"
    r"(?P<star_after>[★☆✶✱⭑])?(?![\w/])"
)
# "C 0172": the rarity letter first, then four digits (a zero-padded number, no total).
_RARITY_FIRST = re.compile(
    r"(?<![\w/])(?P<rarity>[CURMSTLPcurmstlp])\s?(?P<num>[OQDo0]?(?=[\dOQDo]*\d)[\dOQDo]{3,4})(?P<suffix>[a-z])?"
    r"(?![\w/])")
_ZEROS = str.maketrans("OQDo", "0000")
# The years a legal line prints ("1993-2003" on early 2003-frame cards).
_YEARS = re.compile(r"(?<!\d)(?:19|20)\d\d(?:\s*[-–~]\s*(?:19|20)\d\d)?(?!\d)")
# Prefix letters OCR makes of a leading digit ("I23" for "123"): such a prefix is offered as the digit too.
_DIGIT_LOOKALIKES = str.maketrans({"I": "1", "L": "1", "O": "0", "S": "5", "B": "8", "Z": "2", "G": "6"})
# A run of digits too long to be a number: "1297280" is "129/280" with the slash read as a digit.
_DIGIT_RUN = re.compile(rf"(?<![\w/])(?P<star>[{_STAR_CHARS}])?(?P<run>\d{{5,9}})(?P<suffix>[A-Z])?(?![\w/])")
_DIGITS_BEFORE = re.compile(r"(\d{1,3}) $")
# A copyright sign just before digits: they are the copyright year ("© 199" for "© 1999"), never a collector number.
_COPYRIGHT_BEFORE = re.compile(r"(?:©|\(c\))\s*$", re.IGNORECASE)
_TOKEN = re.compile(r"[A-Za-z0-9\]\[)|$€?/]{2,8}")
_SEPARATORS = re.compile(r"[•·∙●◦°«»,;:_~\-–—+=*#%&^\"'`]")
# Lower-case letters whose upper case looks different: a token holding one is a word, not an upper-case code.
_WORD_LETTERS = frozenset("abdefghjmnqrty")
_STARS_NORMAL = str.maketrans(dict.fromkeys("★☆✶✱⭑\u2217", "*"))
_LEADING_ZEROS = re.compile(r"^0+(?=\d)")
_SPACES = re.compile(r"\s+")

NumberOption = tuple[str, int | None]  # (collector number, printed total)


@dataclass(frozen=True)
class CollectorParse:
    """What a collector-line OCR text says: number, candidate set tokens (best first), language.

    `number_options` lists every (number, total) the text can mean, the parse's own choice first: a digit run
    such as "1297280" may be "129/280" or "12/280" depending on which set totals exist, and only the catalogue can
    tell. `number` and `total` are the first option.
    """

    number: str | None = None
    total: int | None = None
    rarity: str | None = None
    set_tokens: tuple[str, ...] = ()
    language: str | None = None
    has_second_line: bool = False
    lines: tuple[str, ...] = field(default_factory=tuple)
    number_options: tuple[NumberOption, ...] = ()
    layout: str | None = None
    """The layout the text reads as (`domain.printed_lines`): rarity first ("C 0172"), modern (a number over a set
    code or language), legal number (the number ends a legal line); None when no number was found or none tells."""

    @property
    def set_token(self) -> str | None:
        """The most likely raw set-code token."""
        return self.set_tokens[0] if self.set_tokens else None


def normalise_collector_number(raw: str | None) -> str:
    """Comparable form of a collector number: no leading zeros, lower-case suffix, a star as a trailing `*`.

    A printed total (`123/280`) is dropped, so `0123/280` and `123` compare equal; `12A` equals `12a`; `7★`,
    `★7` and `07*` all become `7*` (the parser writes the star first, Scryfall usually last); a prefix keeps its
    letters without the hyphen (`A-12` and `A12` are `a12`). Returns "" for a missing or blank number.
    """
    if raw is None:
        return ""
    text = _SPACES.sub("", raw.translate(_STARS_NORMAL)).lower().split("/", 1)[0].replace("-", "")
    body = text.replace("*", "")
    starred = "*" if len(body) < len(text) else ""
    return _LEADING_ZEROS.sub("", body) + starred


def is_credit_word(token: str) -> bool:
    """Whether a token is a word of the artist credit rather than an upper-case set code: "Illus" however OCR
    mangles it (lllus, Iilus, llus, Hus, hilus), or any word in lower case (Jonas, Wen)."""
    if any(ch in _WORD_LETTERS for ch in token):
        return True
    return token.endswith(("us", "ws", "vs")) or levenshtein(fold(token), "IIIUS", limit=1) <= 1


def _language_of(token: str, first: bool) -> str | None:
    """The language a token marks: "EN", or (after the set code) "EN" glued to a misread paintbrush ("ENZ",
    "EN/", "EN7", "ENS")."""
    upper = token.upper()
    if upper in LANGUAGES:
        return upper
    if not first and len(upper) == 3 and upper[:2] in LANGUAGES and (not upper[2].isalpha() or upper[2] in "SZJ"):
        return upper[:2]
    return None


def _abbreviations(line: str) -> set[str]:
    """Tokens followed by a full stop and a capitalised word: "Illus. Anna" (never "M20 • EN")."""
    return set(re.findall(r"(\S+?)\.\s*[A-Z][a-z]", line))


_ACCENTED = re.compile("[\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u00ff]")


_AMPERSAND_DIGIT = re.compile(r"(?<=\d)&|&(?=\d)")
# A total broken by a speck OCR read as a dot or comma ("55/30.3"), and a slash read as a colon ("352:363").
_TOTAL_BREAK = re.compile(r"(/\d{1,3})[.,](\d)(?!\d*[.,/]\d)")
_COLON_SLASH = re.compile(r"(?<![\d:])(\d{1,4}):(\d{2,4})(?![\d:])")


def _clean_lines(text: str) -> list[str]:
    """Non-empty lines, accented letters as "?": nothing on a collector line has one, so it is a glyph OCR could
    not read ("FD6" read as "FDé"), which snapping then counts as one wrong character. An ampersand against a digit
    is an 8 ("5&/344"): the legal line's "™ &" stands apart. A dot or comma inside a total is a speck ("55/30.3"), a
    colon between digit groups a slash ("352:363")."""
    text = _AMPERSAND_DIGIT.sub("8", _ACCENTED.sub("?", text.replace("\r", "\n")))
    text = _COLON_SLASH.sub(r"\1/\2", _TOTAL_BREAK.sub(r"\1\2", text))
    return [line.strip() for line in text.split("\n") if line.strip()]


def _number_of(match: re.Match[str], with_total: bool) -> tuple[str, int | None, str | None, str]:
    """(number, total, rarity, text after the match) of a number match."""
    total = int(match.group("total")) if with_total else None
    rest = match.string[match.end() :]
    suffix = match.group("suffix") or ""
    rarity: str | None = None
    if suffix and (suffix.isupper() and suffix in RARITY_LETTERS and not total):
        rarity, suffix = suffix, ""
    number = match.group("num").lstrip("0") or "0"
    starred = match.group("star") or match.group("star_after")
    number = (STAR if starred else "") + (match.group("prefix") or "") + number + suffix.lower()
    if rarity is None:
        letters = re.findall(r"\b([A-Z])\b", rest) or re.findall(r"^([A-Z])\b", rest.strip())
        rarity = letters[0] if letters and letters[0] in RARITY_LETTERS else None
    return number, total, rarity, rest


def _with_alternatives(number: str, total: int | None, line: str, start: int) -> list[NumberOption]:
    """The number and what it may also be: with a digit group OCR split off by a space ("35 1/363" is 351/363,
    preferred when it fits the total), without a star OCR invented, with a star OCR dropped."""
    options: list[NumberOption] = [(number, total)]
    plain = number.lstrip(STAR)
    prefix = plain[: len(plain) - len(plain.lstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZ"))]
    if prefix:
        star = number[: len(number) - len(plain)]
        bare = plain[len(prefix) :]
        digits = prefix.translate(_DIGIT_LOOKALIKES)
        if digits.isdigit():  # "I23" is more likely "123" misread than a prefixed number
            options.insert(0, (star + digits + bare, total))
        options.append((star + bare, total))
        return options
    before = _DIGITS_BEFORE.search(line[:start])
    if before and plain[:1].isdigit():
        joined = before.group(1) + plain
        fits = total is not None and joined.isdigit() and int(joined) <= total
        options.insert(0 if fits else 1, (joined, total))
    options.append((plain, total) if number.startswith(STAR) else (STAR + number, total))
    return options


def _total_cut(options: list[NumberOption]) -> list[NumberOption]:
    """The options, then each without its total when the total read has fewer digits than the number ("266/32 M"
    for "266/302 M", "375/ 2" for "375/382": blurred small type loses a digit of the total, seldom of the number
    before it): the catalogue may confirm the number by itself, as it would a number read with no total. A total
    of four digits or more, longer than the number, may end in the rarity letter read as a digit ("113/3200" for
    "113/320 C"): the total without its last digit is an option too."""
    cut = [(number, None) for number, total in options
           if total is not None and len(str(total)) < sum(ch.isdigit() for ch in number) <= 4]
    cut += [(number, total // 10) for number, total in options
            if total is not None and total >= 1000 and len(str(total)) > sum(ch.isdigit() for ch in number)]
    return options + [option for option in cut if option not in options]


def split_digit_run(run: str) -> list[NumberOption]:
    """Every (number, total) a run of 5-9 digits may be, most plausible first: a number of 1-4 digits, one digit
    that was the slash, and a total of 2-4 digits (or number and total with the slash lost). Plausible means the
    slash read as 7 or 1 (how OCR misreads it), a three-digit total, and a number no larger than its total. Last,
    what a letter read as a digit makes of a run: the rarity letter after the total ("4711530" is "47/153 C"), or
    before a zero-padded number ("10395" is "R 0395")."""
    options: list[tuple[int, NumberOption]] = []
    for size in range(min(4, len(run) - 3), 0, -1):
        number, rest = run[:size], run[size:]
        for kept, total in ((True, rest[1:]), (False, rest)):
            if 2 <= len(total) <= 4 and not total.startswith("0") and not number.startswith("0"):
                score = 2 * (kept and rest[0] in "71") + (len(total) == 3) + 2 * (int(number) <= int(total))
                options.append((score, (number, int(total))))
    options.sort(key=lambda item: -item[0])  # stable: longer numbers first among equals
    found = [option for _, option in options]
    if len(run) >= 6:  # the rarity letter after the total, read as a digit
        found += [option for option in split_digit_run(run[:-1]) if option not in found]
    if len(run) == 5 and run[1] == "0" and run[2:].strip("0"):  # the rarity letter before a four-digit number
        found.append((run[1:].lstrip("0"), None))
    return found


def _credit_near(line: str, start: int, end: int) -> bool:
    """Whether a number at line[start:end] stands in the set-code or credit part of a line: after a language
    marker or a credit word, or right before one (the paintbrush read as a digit before the artist's name, or the
    set code misread as digits before "EN")."""
    before = [t for t in _TOKEN.findall(_SEPARATORS.sub(" ", line[:start])) if has_letter(t)]
    if any(is_credit_word(t) or _language_of(t, first=False) for t in before):
        return True
    after = [t for t in _TOKEN.findall(_SEPARATORS.sub(" ", line[end:])) if has_letter(t)]
    return bool(after) and (is_credit_word(after[0]) or _language_of(after[0], first=True) is not None)


def _is_year_pair(match: re.Match[str]) -> bool:
    """Whether an "n/total" match is a copyright range read with a slash ("1993/2003"), not a collector number."""
    return all(1993 <= int(match.group(key)) <= 2099 for key in ("num", "total")) and len(match.group("num")) == 4


def _is_year(match: re.Match[str]) -> bool:
    """Whether a 19xx/20xx token is a copyright year (1993 to 2099), not a piece of a longer digit run."""
    return 1993 <= int(match.group()[:4]) <= 2099


def legal_end(line: str) -> int | None:
    """Where a legal line's legal text ends (after its last legal word: "Wizards", "Coast", "Inc.", "©"..., or its
    copyright year: OCR mangles the words of small type, rarely a year), or None for a line without legal text. A
    collector number on a legal line comes after it."""
    words = list(LEGAL_WORDS.finditer(line))
    years = [year for year in _YEARS.finditer(line) if _is_year(year)]
    if not words and not years:
        return None
    end = max([m.end() for m in words[-1:]] + [m.end() for m in years])
    for word in words:  # OCR mangles "Wizards of the Coast": a word just after the last anchor is part of it
        end = max(end, word.end())
    return end


def _with_total(line: str, legal: int | None) -> re.Match[str] | None:
    """The line's "n/total" collector number: on a legal line the last one after the legal text (else the last
    one that is no year range), elsewhere the first."""
    matches = [m for m in _NUMBER_WITH_TOTAL.finditer(line) if not _is_year_pair(m)]
    if legal is None or not matches:
        return matches[0] if matches else None
    after = [m for m in matches if m.start("num") >= legal]
    return (after or matches)[-1]


def _number_line(lines: list[str]) -> tuple[int, list[NumberOption], str | None, str]:
    """(index, number options, rarity, rest of the line) of the collector number's line, or (-1, [], None, "").

    An "n/total" form on any line wins (on a legal line, the one after the legal text). Then a rarity-first
    "C 0172". Otherwise the number comes from the first line holding one, never from its set-code or credit part,
    and on a legal line only after the legal text (a year, or a piece of one, is never the number; nor are digits
    just after a copyright sign, a year misread: "© 199")."""
    ends = [legal_end(line) for line in lines]
    for i, line in enumerate(lines):
        match = _with_total(line, ends[i])
        if match:
            number, total, rarity, rest = _number_of(match, with_total=True)
            return i, _total_cut(_with_alternatives(number, total, line, match.start("num"))), rarity, rest
    for i, line in enumerate(lines):
        marked = any(_language_of(token, first=False) for token in _TOKEN.findall(_SEPARATORS.sub(" ", line)))
        match = _RARITY_FIRST.search(line) if ends[i] is None and not marked else None
        if match:  # four digits, leading zeros read as O or lost allowed ("ROO70" and "C Q58" are 0070 and 0058)
            number = (match.group("num").translate(_ZEROS).lstrip("0") or "0") + (match.group("suffix") or "")
            return i, _with_alternatives(number, None, line, match.start("num")), match.group("rarity").upper(), \
                line[match.end():]
    tried_plain = False
    for i, line in enumerate(lines):
        start = ends[i] or 0
        tail = line[start:]
        if not any(ch.isdigit() for ch in tail) or (tried_plain and ends[i] is None):
            continue
        legal = ends[i] is not None
        # On a legal line the number is the last one after the legal text, whatever mangled words precede it; on
        # a number line the first, never one in the set-code or credit part.
        runs = [m for m in _DIGIT_RUN.finditer(tail) if _may_be_number(line, start, legal, m)]
        if runs:
            run = runs[-1] if legal else runs[0]
            star = STAR if run.group("star") else ""
            options = [(star + number, total) for number, total in split_digit_run(run.group("run"))]
            suffix = run.group("suffix")
            return i, options, suffix if suffix in RARITY_LETTERS else None, tail[run.end() :]
        alone = [m for m in _NUMBER_ALONE.finditer(tail) if _may_be_number(line, start, legal, m)]
        if alone:
            match = alone[-1] if legal else alone[0]
            number, _, rarity, rest = _number_of(match, with_total=False)
            return i, _with_alternatives(number, None, tail, match.start("num")), rarity, rest
        # After the first line holding a digit outside legal text (the number line) only a legal line may hold
        # the number: the lines below a number line are the set code and the credit, where a digit is a misread.
        tried_plain = tried_plain or ends[i] is None
    return -1, [], None, ""


def _may_be_number(line: str, start: int, legal: bool, match: re.Match[str]) -> bool:
    """Whether a digit match in `line[start:]` may be the number: not in a number line's set-code or credit part,
    and not just after a copyright sign (a year misread)."""
    tail = line[start:]
    return (legal or not _credit_near(tail, match.start(), match.end())) and \
        not _COPYRIGHT_BEFORE.search(line[: start + match.start()])


def _set_tokens(line: str) -> tuple[list[str], str | None]:
    """Candidate set-code tokens on a line (best first) and its language marker; nothing after the marker (the
    artist credit follows it) and no word of the credit is a candidate."""
    # A slash inside a token is a misread glyph ("B/78"); at its edge it is the paintbrush ("ENS/").
    tokens = [t.strip("/") for t in _TOKEN.findall(_SEPARATORS.sub(" ", line)) if len(t.strip("/")) >= 2]
    abbreviations = _abbreviations(line)
    language: str | None = None
    candidates: list[str] = []
    for position, token in enumerate(tokens):
        marker = _language_of(token, first=position == 0)
        if marker is not None:
            language = marker
            break
        upper = token.upper()
        glued = upper.endswith("EN") and 3 <= len(upper) - 2 <= 5
        stem = token[:-2] if glued else token
        if is_credit_word(stem) or token in abbreviations:
            break  # the artist credit: nothing from here on is a set code
        for option in [stem, token] if glued else [token]:
            if 3 <= len(option) <= 5 and has_letter(fold(option)):
                candidates.append(option)
        if glued:
            language = "EN"
            break
    # Tokens read as digits only (S02 -> 502) may still snap, but only after every lettered one.
    candidates.sort(key=lambda token: not has_letter(token))
    return candidates, language


def parse_collector(text: str) -> CollectorParse:
    """Parse collector-block OCR text such as "123/280 R\\nM20 • EN", "C 0172\\nDSK • EN ✎ Anna Chen" or
    "✎ Anna Chen\\n™ & © 2012 Wizards of the Coast 174/274" (the number is never the total nor a year)."""
    lines = _clean_lines(text)
    index, options, rarity, rest = _number_line(lines)
    on_legal = index >= 0 and legal_end(lines[index]) is not None
    following = lines[index + 1 :] if index >= 0 else lines
    tokens: list[str] = []
    language: str | None = None
    for line in following:
        if legal_end(line) is not None:
            continue  # a legal line prints no set code: its year is no candidate
        found, lang = _set_tokens(line)
        tokens += found
        language = language or lang
    if index >= 0 and not tokens and not on_legal:
        # OCR sometimes merges the two lines; look after the number on its own line.
        found, lang = _set_tokens(rest)
        tokens, language = found, language or lang
    number, total = options[0] if options else (None, None)
    layout: str | None = None
    if number is not None:
        if not on_legal and total is None and _RARITY_FIRST.search(lines[index]):
            layout = RARITY_FIRST
        elif tokens or language:
            layout = MODERN
        elif on_legal:
            layout = LEGAL_NUMBER
    return CollectorParse(
        number=number,
        total=total,
        rarity=rarity,
        set_tokens=tuple(tokens),
        language=language,
        has_second_line=bool(following),
        lines=tuple(lines),
        number_options=tuple(dict.fromkeys(options)),
        layout=layout,
    )
