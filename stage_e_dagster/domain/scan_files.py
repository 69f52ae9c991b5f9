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


@dataclass(frozen=True)
class Listing:
    """What a directory's image files look like right now, cheaply: how many, their total size, and a digest of
    every file's relative path, size, modification time and inode-change time (nanoseconds; the latter moves when a
    file is replaced by one with an old modification time). No file is opened, so a listing costs one `stat` per
    file; the digest keeps whatever remembers it small whatever the number of files."""

    files: int
    total_bytes: int
    digest: str


def list_images(root: Path) -> Listing | None:
    """The `Listing` of the image files under `root` (symlinks never followed, as `find_images`), or None when
    `root` is not a readable directory (unmounted, removed): an absent directory is not an empty one."""
    try:
        if not root.is_dir():
            return None
        os.listdir(root)
    except OSError:
        return None
    digest = hashlib.blake2b(digest_size=16)
    files = total = 0
    pending = [(root, "")]
    while pending:
        directory, prefix = pending.pop()
        try:
            with os.scandir(directory) as entries:
                items = sorted(entries, key=lambda entry: entry.name)
        except OSError:
            digest.update(f"!{prefix}\n".encode())
            continue
        subdirs = []
        for entry in items:
            try:
                if entry.is_symlink():
                    continue
                if entry.is_dir(follow_symlinks=False):
                    subdirs.append((Path(entry.path), f"{prefix}{entry.name}/"))
                elif is_image_name(entry.name) and entry.is_file(follow_symlinks=False):
                    stat = entry.stat(follow_symlinks=False)
                    digest.update(f"{prefix}{entry.name}\0{stat.st_size}\0{stat.st_mtime_ns}\0{stat.st_ctime_ns}\n".encode())
                    files += 1
                    total += stat.st_size
            except OSError:
                continue  # vanished between the listing and the stat: it is not there
        pending.extend(reversed(subdirs))
    return Listing(files, total, digest.hexdigest())
