"""Scan files for the review page: read only from inside the card's source directory, served only as what their
bytes are (PNG, JPEG or WebP, `media_type`), and the crops shown beside.

A card's scan is `<source location>/<identifier>`. Both come from the database, but a row can be wrong and a
directory can change after ingest, so the path is checked every time: the identifier must be relative, every
symlink is resolved, and the resolved file must lie inside the resolved source directory and be an image file.
The file is then opened without following a final symlink, and the opened descriptor is checked again (through
`/proc/self/fd`, where available), so swapping a path component for a symlink between the check and the read
gains nothing.

Crops use the extractor's own geometry (`load_scan`, bleed class, trim rectangle, the bottom `BAND`), so the
enlarged collector line is the region the OCR read. They are cut from the card alone: a photo's card is cut out at
the corners Stage C stored (`image_evidence.card_corners`, `card_finder.warp_card`), so a reviewer sees the card,
not the table; a scan's corners are its own and it is used as it is.
"""

from __future__ import annotations

import io
import os
from pathlib import Path, PurePosixPath

from PIL import Image

from stage_e_dagster.domain import layout
from stage_e_dagster.domain.evidence.card_finder import warp_card
from stage_e_dagster.domain.evidence.geometry import classify_bleed, crop_region, trim_of
from stage_e_dagster.domain.evidence.load import LoadedScan, load_scan
from stage_e_dagster.domain.evidence.model import EvidenceSkip, corner_pairs, is_whole_image
from stage_e_dagster.domain.filenames import IMAGE_SUFFIXES

MAX_SCAN_BYTES = 64 * 1024 * 1024
MEDIA_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp"}
CROPS = {"collector": (layout.BAND, 110), "symbol": (layout.SYMBOL_CROP, 96)}
"""What a reviewer sees enlarged: the whole bottom band (every era prints its collector line somewhere in it), and
the set symbol; each with its height in pixels."""


class ScanRefused(Exception):
    """The scan cannot be served; the message says why (never shown with the path to a browser)."""


def safe_scan_path(location: str, identifier: str) -> Path:
    """The resolved path of a scan inside its source directory; `ScanRefused` for anything else."""
    rel = PurePosixPath(identifier)
    if not identifier or "\x00" in identifier or rel.is_absolute() or ".." in rel.parts:
        raise ScanRefused("identifier is not a plain relative path")
    try:
        root = Path(location).resolve(strict=True)
        path = (root / rel).resolve(strict=True)
    except (OSError, RuntimeError) as err:
        raise ScanRefused(f"not found: {err.__class__.__name__}") from err
    if not path.is_relative_to(root):
        raise ScanRefused("resolves outside its source directory")
    if path.suffix.lower() not in IMAGE_SUFFIXES or not path.is_file():
        raise ScanRefused("not an image file")
    return path


def read_scan(location: str, identifier: str) -> tuple[bytes, str]:
    """The scan's bytes and media type, read through the checks of `safe_scan_path`."""
    path = safe_scan_path(location, identifier)
    root = Path(location).resolve(strict=True)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError as err:
        raise ScanRefused(f"cannot open: {err.__class__.__name__}") from err
    with os.fdopen(fd, "rb") as handle:
        proc = Path(f"/proc/self/fd/{fd}")
        if proc.exists() and not Path(os.readlink(proc)).is_relative_to(root):
            raise ScanRefused("opened file lies outside its source directory")
        if os.fstat(fd).st_size > MAX_SCAN_BYTES:
            raise ScanRefused("file too large to serve")
        data = handle.read()
    return data, MEDIA_TYPES[path.suffix.lower()]


def media_type(data: bytes) -> str:
    """The media type of a scan by its content: PNG, JPEG or WebP (`DECODED_FORMATS`); `ScanRefused` for anything
    else, whatever its name says (a browser is never handed bytes the pipeline would not decode)."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    raise ScanRefused("not a PNG, JPEG or WebP image")


def _png(img: Image.Image) -> bytes:
    out = io.BytesIO()
    img.save(out, format="PNG", optimize=False)
    return out.getvalue()


def _card(data: bytes, corners: list[float] | None) -> LoadedScan:
    """The decoded card alone: the scan itself when its corners are the image's own (or none are stored), else the
    card cut out of the photo at `corners` (normalised, as stored), its size counted in the file's pixels."""
    loaded = load_scan(data)
    if isinstance(loaded, EvidenceSkip):
        raise ScanRefused(f"unreadable image: {loaded.reason}")
    pairs = corner_pairs(corners)
    if is_whole_image(corners) or pairs is None:
        return loaded
    card = warp_card(loaded.image, pairs)  # type: ignore[arg-type]
    scale = loaded.scale or 1.0
    return LoadedScan(card, max(1, round(card.width / scale)), max(1, round(card.height / scale)), loaded.format)


def crop(data: bytes, which: str, corners: list[float] | None = None) -> bytes:
    """A PNG of the card's `which` region (`collector` or `symbol`), scaled to a readable height; `corners` are
    where Stage C found the card in the image (`image_evidence.card_corners`)."""
    box, height = CROPS[which]
    loaded = _card(data, corners)
    facts = classify_bleed(loaded.width, loaded.height)
    region = crop_region(loaded.image, trim_of(loaded.image, facts.has_bleed), box)
    width = max(1, round(region.width * height / max(1, region.height)))
    return _png(region.resize((width, height), Image.LANCZOS))


def thumbnail(data: bytes, long_side: int = 320, corners: list[float] | None = None) -> bytes:
    """A small JPEG of the card (cut out of a photo at `corners`) for the grid."""
    img = _card(data, corners).image.copy()
    img.thumbnail((long_side, long_side))
    out = io.BytesIO()
    img.convert("RGB").save(out, format="JPEG", quality=80)
    return out.getvalue()
