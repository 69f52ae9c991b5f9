"""Finding card scans in a directory, reading one safely (`read_scan`), and fingerprinting its bytes (sha256 and a
64-bit perceptual hash)."""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import imagehash
from PIL import Image

from stage_e_dagster.domain.evidence.hashing import hash_to_int
from stage_e_dagster.domain.evidence.load import open_image
from stage_e_dagster.domain.evidence.model import EvidenceSkip
from stage_e_dagster.domain.filenames import is_image_name

MAX_PIXELS = 60_000_000
MAX_SCAN_BYTES = 256 * 1024 * 1024
"""A scan file larger than this is refused (`file-too-large`) before a byte of it is read."""


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
            if not _is_utf8(identifier):
                yield Refused(printable_name(identifier), "name is not valid UTF-8")
            elif path.is_symlink():
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


def _is_utf8(name: str) -> bool:
    """False for a name holding bytes that are not UTF-8 (Python decodes them as lone surrogates)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def printable_name(name: str) -> str:
    """`name` with any byte that is not UTF-8 shown as `\\xNN`, safe to print and to store as text."""
    return os.fsencode(name).decode("utf-8", "backslashreplace")


def _refuse(reason: str, path: str, **detail: object) -> EvidenceSkip:
    return EvidenceSkip(reason, {"path": printable_name(path), **detail})


def read_scan(root: str | Path, path: str | Path, max_bytes: int = MAX_SCAN_BYTES) -> bytes | EvidenceSkip:
    """The bytes of the scan at `path` (absolute, or relative to the source directory `root`), or a named skip.

    The one way a scan is opened, at ingest and at Stage C, because the file may have been replaced since it was
    listed. It never follows a symlink (in the file or any directory between it and `root`: `file-symlink`),
    never leaves `root` (`outside-source`), opens only regular files, so never a FIFO that would block it
    (`not-a-regular-file`), and never reads more than `max_bytes` (`file-too-large`, checked before reading and
    again while reading, so a file that grows under the reader is cut off). `file-missing` and `file-unreadable`
    cover the rest. Never raises on an OSError.
    """
    root_s = os.path.abspath(os.fspath(root))
    full = os.path.abspath(os.path.join(root_s, os.fspath(path)))
    rel = os.path.relpath(full, root_s)
    if rel == os.curdir or rel == os.pardir or rel.startswith(os.pardir + os.sep):
        return _refuse("outside-source", full, root=printable_name(root_s))
    parts = rel.split(os.sep)
    fd = -1
    try:
        fd = os.open(root_s, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        for part in parts[:-1]:
            parent, fd = fd, -1
            try:
                fd = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent)
            except NotADirectoryError:  # what O_DIRECTORY | O_NOFOLLOW says of a symlink, too
                if stat.S_ISLNK(os.stat(part, dir_fd=parent, follow_symlinks=False).st_mode):
                    return _refuse("file-symlink", full, link=printable_name(part))
                raise
            finally:
                os.close(parent)
        parent, fd = fd, -1
        try:
            # Looked at before it is opened: opening a FIFO to read would wait for a writer. A file swapped for one
            # in between still cannot hang a run: Stage C abandons a card after its task timeout.
            info = os.stat(parts[-1], dir_fd=parent, follow_symlinks=False)
            if stat.S_ISLNK(info.st_mode):
                return _refuse("file-symlink", full)
            if not stat.S_ISREG(info.st_mode):
                return _refuse("not-a-regular-file", full, mode=stat.filemode(info.st_mode))
            fd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NOCTTY | os.O_CLOEXEC, dir_fd=parent)
        finally:
            os.close(parent)
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return _refuse("not-a-regular-file", full, mode=stat.filemode(info.st_mode))
        if info.st_size > max_bytes:
            return _refuse("file-too-large", full, size=info.st_size, limit=max_bytes)
        with open(fd, "rb", closefd=True) as handle:
            fd = -1
            want = info.st_size + 1
            data = handle.read(want)
            if len(data) == want:  # longer than it was a moment ago: it is growing
                data += handle.read(max_bytes + 1 - len(data))
        if len(data) > max_bytes:
            return _refuse("file-too-large", full, size=f"> {max_bytes}", limit=max_bytes)
        return data
    except OSError as err:
        if err.errno == errno.ELOOP:
            return _refuse("file-symlink", full)
        if err.errno in (errno.ENOENT, errno.ENOTDIR):
            return _refuse("file-missing", full)
        if err.errno in (errno.ENXIO, errno.EOPNOTSUPP):  # a socket or a device without a reader
            return _refuse("not-a-regular-file", full, error=err.strerror)
        return _refuse("file-unreadable", full, error=str(err.strerror or err))
    finally:
        if fd >= 0:
            os.close(fd)


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def content_phash(image: Path | BinaryIO) -> int | None:
    """A signed 64-bit phash of the whole image (a path or an open binary file), or None when it cannot be
    decoded (or is not a PNG, JPEG or WebP: `domain.evidence.load.DECODED_FORMATS`)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with open_image(image) as img:
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
    changed: int = 0  # files modified or moved at or after `changed_since` (every file when it was None)


def list_images(root: Path, changed_since: float | None = None) -> Listing | None:
    """The `Listing` of the image files under `root` (symlinks never followed, as `find_images`), or None when
    `root` is not a readable directory (unmounted, removed): an absent directory is not an empty one.

    `changed` counts the files a quick sync that trusts what was stored before `changed_since` (POSIX seconds) would
    read: those whose modification or inode-change time is not older."""
    try:
        if not root.is_dir():
            return None
        os.listdir(root)
    except OSError:
        return None
    digest = hashlib.blake2b(digest_size=16)
    files = total = changed = 0
    since_ns = None if changed_since is None else int(changed_since * 1e9)
    pending = [(root, "")]
    while pending:
        directory, prefix = pending.pop()
        try:
            with os.scandir(directory) as entries:
                items = sorted(entries, key=lambda entry: entry.name)
        except OSError:
            digest.update(f"!{prefix}\n".encode("utf-8", "surrogateescape"))
            continue
        subdirs = []
        for entry in items:
            try:
                if entry.is_symlink():
                    continue
                if entry.is_dir(follow_symlinks=False):
                    subdirs.append((Path(entry.path), f"{prefix}{entry.name}/"))
                elif is_image_name(entry.name) and entry.is_file(follow_symlinks=False):
                    info = entry.stat(follow_symlinks=False)
                    line = f"{prefix}{entry.name}\0{info.st_size}\0{info.st_mtime_ns}\0{info.st_ctime_ns}\n"
                    digest.update(line.encode("utf-8", "surrogateescape"))  # names need not be UTF-8
                    files += 1
                    total += info.st_size
                    changed += since_ns is None or max(info.st_mtime_ns, info.st_ctime_ns) >= since_ns
            except OSError:
                continue  # vanished between the listing and the stat: it is not there
        pending.extend(reversed(subdirs))
    return Listing(files, total, digest.hexdigest(), changed)
