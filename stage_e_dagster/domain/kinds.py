"""What kind of upload a file is, from its source's folder and file-name conventions, and whether a machine may vote.

A contributor's source says what a file shows by where it lies and how it is named: a folder `tokens/` or a tag
`[token]` in the file name makes a token, `cardbacks/` or `[cardback]` a card back, `[custom art]` marks custom art,
and a bracketed language code (`[de]`) or a folder named for a language (`german/`) sets the language. Language is
taken from these conventions only, never from OCR. The conventions are an operator's to change (`Conventions`, built
from the settings); the card name and the `[SET]` hint keep the file-name rules of `domain.filenames`.

`machine_ineligibility` is the pure statement of which uploads no machine votes on, and why; the work rule in the
database (`db/work/rule.sql`) applies the same reasons, and `domain.work` mirrors it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath

from stage_e_dagster.domain.filenames import parse_card_filename

KINDS = ("card", "token", "cardback")

CARD_BACK = "card-back"
CUSTOM_ART = "custom-art"
NON_ENGLISH = "non-english"
LOW_DPI = "low-dpi"
REASONS = (CARD_BACK, CUSTOM_ART, NON_ENGLISH, LOW_DPI)
"""Every named reason a machine must not vote on an upload, in the order they are judged."""

ENGLISH = "en"
LANGUAGE_CODES = ("en", "es", "fr", "de", "it", "pt", "ja", "ko", "ru", "zhs", "zht", "he", "la", "grc", "ar", "sa",
                  "ph")
"""Scryfall's language codes."""

LANGUAGE_FOLDERS = (
    ("english", "en"), ("spanish", "es"), ("espanol", "es"), ("español", "es"), ("french", "fr"),
    ("francais", "fr"), ("français", "fr"), ("german", "de"), ("deutsch", "de"), ("italian", "it"),
    ("italiano", "it"), ("portuguese", "pt"), ("portugues", "pt"), ("português", "pt"), ("japanese", "ja"),
    ("korean", "ko"), ("russian", "ru"), ("chinese", "zhs"), ("simplified chinese", "zhs"),
    ("chinese simplified", "zhs"), ("traditional chinese", "zht"), ("chinese traditional", "zht"),
    ("hebrew", "he"), ("latin", "la"), ("ancient greek", "grc"), ("greek", "grc"), ("arabic", "ar"),
    ("sanskrit", "sa"), ("phyrexian", "ph"),
)
"""Folder names that set a language besides the codes themselves (which always do), as (folder, code) pairs."""

DEFAULT_MIN_DPI = 200
"""The resolution under which no machine votes (`STAGE_E_MIN_DPI`)."""
CARD_WIDTH_MM = 63.0
CARD_HEIGHT_MM = 88.0
MM_PER_INCH = 25.4

TOKEN_LAYOUTS = ("token", "double_faced_token", "emblem")
"""Printing layouts that make a token printing (besides any printing of a token set)."""
TOKEN_SET_TYPES = ("token",)
"""Scryfall set types whose printings are token printings."""

_BRACKETED = re.compile(r"\[([^\[\]]*)\]")


def _word(text: str) -> str:
    """A folder name or tag as conventions compare them: lower case, runs of blanks and underscores one space."""
    return " ".join(text.replace("_", " ").lower().split())


def _words(items: Iterable[str]) -> frozenset[str]:
    return frozenset(w for w in (_word(i) for i in items) if w)


@dataclass(frozen=True)
class Conventions:
    """Which folder names and file-name tags mean what; compared case-blind, `_` as a blank."""

    token_folders: frozenset[str] = frozenset({"tokens"})
    token_tags: frozenset[str] = frozenset({"token"})
    cardback_folders: frozenset[str] = frozenset({"cardbacks"})
    cardback_tags: frozenset[str] = frozenset({"cardback"})
    custom_art_tags: frozenset[str] = frozenset({"custom art", "custom-art"})
    language_codes: frozenset[str] = frozenset(LANGUAGE_CODES)
    language_folders: tuple[tuple[str, str], ...] = LANGUAGE_FOLDERS

    @classmethod
    def of(cls, *, token_folders: Iterable[str], token_tags: Iterable[str], cardback_folders: Iterable[str],
           cardback_tags: Iterable[str], custom_art_tags: Iterable[str], language_codes: Iterable[str],
           language_folders: Iterable[tuple[str, str]]) -> Conventions:
        """Conventions from plain lists (as settings hold them), normalised the way `classify` compares."""
        return cls(
            token_folders=_words(token_folders), token_tags=_words(token_tags),
            cardback_folders=_words(cardback_folders), cardback_tags=_words(cardback_tags),
            custom_art_tags=_words(custom_art_tags), language_codes=_words(language_codes),
            language_folders=tuple((_word(folder), _word(code)) for folder, code in language_folders
                                   if _word(folder) and _word(code)))

    def folder_language(self, folder: str) -> str | None:
        """The language a folder's name sets, or None."""
        word = _word(folder)
        if word in self.language_codes:
            return word
        for name, code in self.language_folders:
            if name == word:
                return code
        return None


DEFAULT_CONVENTIONS = Conventions()


@dataclass(frozen=True)
class Upload:
    """What a source's conventions say about one file: its kind, its language if they name one, and its tags."""

    kind: str = "card"
    language: str | None = None
    tags: frozenset[str] = frozenset()


def classify(relative_path: str, conventions: Conventions = DEFAULT_CONVENTIONS) -> Upload:
    """The upload a source-relative path describes, from its folders and its file name's bracketed tags.

    A card back wins over a token when both are named. A tag's language wins over a folder's, and a deeper folder's
    over a shallower one's. `[custom art]` (any spelling the conventions list) adds the tag `custom-art`.
    """
    parts = PurePosixPath(relative_path.replace("\\", "/")).parts
    folders = [_word(p) for p in parts[:-1]]
    stem = PurePosixPath(parts[-1]).stem if parts else ""
    tags = [_word(t) for t in _BRACKETED.findall(stem)]

    if any(f in conventions.cardback_folders for f in folders) or any(t in conventions.cardback_tags for t in tags):
        kind = "cardback"
    elif any(f in conventions.token_folders for f in folders) or any(t in conventions.token_tags for t in tags):
        kind = "token"
    else:
        kind = "card"

    language = None
    for folder in folders:
        language = conventions.folder_language(folder) or language
    for tag in tags:
        if tag in conventions.language_codes:
            language = tag

    found = frozenset({CUSTOM_ART}) if any(t in conventions.custom_art_tags for t in tags) else frozenset()
    return Upload(kind=kind, language=language, tags=found)


def name_and_hint(relative_path: str, conventions: Conventions = DEFAULT_CONVENTIONS) -> tuple[str, str | None]:
    """The card name and `[SET]` hint by the file-name rules (`parse_card_filename`), the tags the conventions read
    set aside first, so that `Opt [XLN] [token].png` hints `xln` and `Opt [zhs].png` hints no set `zhs`."""
    words = (conventions.token_tags | conventions.cardback_tags | conventions.custom_art_tags
             | conventions.language_codes)
    path = PurePosixPath(relative_path.replace("\\", "/"))
    kept = _BRACKETED.sub(lambda m: "" if _word(m.group(1)) in words else m.group(0), path.stem)
    if not kept.strip():
        return parse_card_filename(path)
    return parse_card_filename(path.with_name(kept.strip() + path.suffix))


def scan_dpi(width_px: int, height_px: int) -> float | None:
    """The scan's resolution in dots per inch, the smaller of its two axes, the shorter side taken as the card's
    63 mm and the longer as its 88 mm (so a scan lying on its side is judged alike); None when a side is unknown."""
    if width_px <= 0 or height_px <= 0:
        return None
    short, long = sorted((width_px, height_px))
    return min(short / (CARD_WIDTH_MM / MM_PER_INCH), long / (CARD_HEIGHT_MM / MM_PER_INCH))


def under_dpi(width_px: int, height_px: int, min_dpi: int) -> bool:
    """Whether a scan of this pixel size is under `min_dpi` on either axis of the card, in whole numbers (px * 254 <
    dpi * 10 * mm) so the database's rule (`rule.sql`) and this one agree at the boundary; unknown sizes are not."""
    if width_px <= 0 or height_px <= 0:
        return False
    short, long = sorted((width_px, height_px))
    return short * 254 < min_dpi * 630 or long * 254 < min_dpi * 880


def machine_ineligibility(upload: Upload, width_px: int, height_px: int, *, min_dpi: int = DEFAULT_MIN_DPI,
                          english_match: bool = False) -> str | None:
    """The named reason no machine may vote on this upload, or None when machines may.

    Card backs show no card; custom art and non-English text defeat matching against English printings (unless
    `english_match` lets a non-English scan match its English printing); a scan under `min_dpi` is too coarse to
    read. A scan whose pixel size is unknown (a side of 0) is not judged on resolution.
    """
    if upload.kind == "cardback":
        return CARD_BACK
    if CUSTOM_ART in upload.tags:
        return CUSTOM_ART
    if upload.language is not None and upload.language != ENGLISH and not english_match:
        return NON_ENGLISH
    if under_dpi(width_px, height_px, min_dpi):
        return LOW_DPI
    return None


def is_token_printing(layout: str | None, set_type: str | None) -> bool:
    """Whether a catalogue printing is a token printing: a token layout, or any printing of a token set."""
    return (layout or "") in TOKEN_LAYOUTS or (set_type or "") in TOKEN_SET_TYPES


def printing_fits(kind: str, layout: str | None, set_type: str | None) -> bool:
    """Whether a machine may vote this upload's kind onto a printing: tokens onto token printings only, cards onto
    non-token printings only (card backs onto none)."""
    if kind == "cardback":
        return False
    return is_token_printing(layout, set_type) == (kind == "token")
