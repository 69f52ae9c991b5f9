"""Finding card scans in a directory and fingerprinting their bytes (sha256 and a 64-bit perceptual hash)."""

from __future__ import annotations

import hashlib
import os
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import imagehash
from PIL import Image

from stage_e_dagster.domain.evidence.hashing import hash_to_int
from stage_e_dagster.domain.filenames import is_image_name

MAX_PIXELS = 60_000_000


@dataclass(frozen=True)
class FoundFile:
    """An image file under the root (`identifier` is its path relative to the root, with `/` separators)."""

    path: Path
    identifier: str


@dataclass(frozen=True)
class Refused:
    """A path that is not ingested, and why (symlink, escapes the root, unreadable directory)."""

    identifier: str
    reason: str


def find_images(root: Path) -> Iterator[FoundFile | Refused]:
    """Walk `root` (never following symlinks) and yield image files in a stable order, or refusals."""
    root = root.resolve()
    errors: list[OSError] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False, onerror=errors.append):
        dirnames.sort()
        base = Path(dirpath)
        for name in list(dirnames):
            if (base / name).is_symlink():
                dirnames.remove(name)
                yield Refused(_rel(root, base / name), "symlink")
        for name in sorted(filenames):
            path = base / name
            if not is_image_name(name):
                continue
            identifier = _rel(root, path)
            if path.is_symlink():
                yield Refused(identifier, "symlink")
            elif not path.is_file():
                yield Refused(identifier, "not a regular file")
            elif not path.resolve().is_relative_to(root):
                yield Refused(identifier, "escapes the source directory")
            else:
                yield FoundFile(path, identifier)
    for err in errors:
        yield Refused(_rel(root, Path(err.filename)) if err.filename else "?", f"unreadable directory: {err}")


def _rel(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def content_phash(path: Path) -> int | None:
    """A signed 64-bit phash of the whole image, or None when it cannot be decoded."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(path) as img:
                if img.width * img.height > MAX_PIXELS:
                    return None
                img.draft("L", (256, 256))
                return hash_to_int(imagehash.phash(img.convert("L")))
    except (OSError, ValueError, SyntaxError, Image.DecompressionBombError, Image.DecompressionBombWarning):
        return None
