"""What a contributor's file name says about a scan: the card name and, maybe, the expansion."""

from __future__ import annotations

import re
from pathlib import PurePath

IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".webp"})
_TRAILING_GROUP = re.compile(r"\s*(\[[^\[\]]*\]|\([^()]*\))\s*$")
_SET_HINT = re.compile(r"^\[([A-Za-z0-9]{3,5})\]$")
# What file managers append to duplicates: "Opt - Copy", "Opt copy", "Opt - Copy (2)".
_COPY_SUFFIX = re.compile(r"\s*(?:-\s*)?\bcopy\s*$", re.IGNORECASE)


def parse_card_filename(path: str | PurePath) -> tuple[str, str | None]:
    """(name, expansion hint) from a file name.

    The name is the stem without its trailing bracketed groups (and a file manager's "- Copy" among them); the
    right-most trailing `[SET]` group of 3-5 letters or digits becomes the hint, lower case like catalogue set
    codes. "Opt [XLN] (2).jpg" -> ("Opt", "xln"); "Opt [XLN] - Copy.jpg" -> ("Opt", "xln").
    """
    stem = PurePath(path).stem
    hint: str | None = None
    while True:
        copy = _COPY_SUFFIX.search(stem)
        if copy is not None and copy.start() > 0:
            stem = stem[: copy.start()]
            continue
        match = _TRAILING_GROUP.search(stem)
        if match is None or match.start() == 0:
            break
        group = match.group(1)
        set_match = _SET_HINT.match(group)
        if set_match and hint is None:
            hint = set_match.group(1).lower()
        stem = stem[: match.start()]
    name = " ".join(stem.replace("_", " ").split())
    return name or PurePath(path).stem, hint


def is_image_name(path: str | PurePath) -> bool:
    return PurePath(path).suffix.lower() in IMAGE_SUFFIXES
