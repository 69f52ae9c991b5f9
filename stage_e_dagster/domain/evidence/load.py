"""Safe decoding of uploaded scan bytes into a normalised RGB image, or a named skip.

Never raises on any input: an empty, foreign, corrupt, truncated or oversized file becomes an `EvidenceSkip`.
Only PNG, JPEG and WebP are decoded (`DECODED_FORMATS`, by content, whatever the file is called): every other
decoder Pillow carries (TIFF, PCX, DDS, SGI, EPS through Ghostscript, ...) is attack surface a scan never needs, and
such a file is `unsupported-format`. `open_image` is the one way the package opens an image.
"""

from __future__ import annotations

import io
import warnings
from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

from stage_e_dagster.domain.evidence.model import EvidenceSkip

# Decompression-bomb guard: refuse anything above this many pixels before decoding a single row.
MAX_PIXELS = 40_000_000
# Anything smaller than this on its short side cannot hold a legible collector line.
MIN_SIDE = 32
# Images are decoded (JPEG draft) or reduced to at least this long side; larger adds cost, not legibility.
WORK_LONG_SIDE = 1680

DECODED_FORMATS = ("PNG", "JPEG", "WEBP")
"""The only image formats decoded anywhere (Stage C, identity hashing, the review page, the symbol import)."""

_SIGNATURES = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff")


def open_image(source: object) -> Image.Image:
    """`Image.open` restricted to `DECODED_FORMATS`: anything else raises `UnidentifiedImageError`."""
    return Image.open(source, formats=DECODED_FORMATS)  # type: ignore[arg-type]


@dataclass(frozen=True)
class LoadedScan:
    """A decoded scan: the working RGB image and the oriented size of the original file in pixels."""

    image: Image.Image
    width: int
    height: int
    format: str | None

    @property
    def scale(self) -> float:
        """Working-image pixels per original pixel (1.0 unless the scan was decoded or reduced smaller)."""
        return self.image.width / self.width if self.width else 1.0


def _skip(reason: str, **detail: object) -> EvidenceSkip:
    return EvidenceSkip(reason=reason, detail=dict(detail))


def _looks_like_image(data: bytes) -> bool:
    """Whether the bytes start with a known image signature (so a decode failure means cut-off data)."""
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return True
    return any(data.startswith(sig) for sig in _SIGNATURES)


def _other_format(data: bytes) -> str | None:
    """The format Pillow would have decoded `data` as, when it is not one of `DECODED_FORMATS` (never decoding it:
    only the plugins' signature checks run)."""
    head = data[:64]
    Image.init()
    for name, (_factory, accept) in Image.OPEN.items():
        try:
            if name not in DECODED_FORMATS and accept is not None and accept(head):
                return name
        except Exception:  # a plugin's check is no reason to fail the card
            continue
    return None


def _is_truncation(exc: BaseException) -> bool:
    return isinstance(exc, EOFError) or "truncat" in str(exc).lower()


def _to_rgb(img: Image.Image) -> Image.Image:
    """Any Pillow mode as 8-bit RGB: alpha composited onto white, high bit depths scaled down (not clipped)."""
    if img.mode in ("I;16", "I;16B", "I;16L", "I;16N", "I", "F"):
        arr = np.asarray(img, dtype=np.float64)
        top = float(arr.max()) if arr.size else 0.0
        if top > 255:
            arr = arr * (255.0 / (65535.0 if top <= 65535 else top))
        return Image.fromarray(np.clip(arr, 0, 255).astype(np.uint8), mode="L").convert("RGB")
    if img.mode == "P" and "transparency" in img.info:
        img = img.convert("RGBA")
    if img.mode in ("RGBA", "LA", "PA", "RGBa", "La"):
        rgba = img.convert("RGBA")
        canvas = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        canvas.alpha_composite(rgba)
        return canvas.convert("RGB")
    if img.mode == "RGB":
        return img
    return img.convert("RGB")


def _draft_size(width: int, height: int) -> tuple[int, int]:
    """Smallest size a JPEG may be draft-decoded to while keeping WORK_LONG_SIDE on the long side."""
    long_side = max(width, height)
    ratio = WORK_LONG_SIDE / long_side
    return max(1, int(width * ratio)), max(1, int(height * ratio))


def load_scan(data: bytes, *, full: bool = False) -> LoadedScan | EvidenceSkip:
    """Decode scan bytes: EXIF orientation applied, first frame only, RGB, at most ~2x WORK_LONG_SIDE (`full`: at
    the file's own size, for a card cut out of a photo, whose collector line may be a few pixels high otherwise)."""
    if not data:
        return _skip("empty-file")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return _load(data, full)
    except Image.DecompressionBombError as exc:
        return _skip("too-large", error=str(exc))
    except MemoryError:
        return _skip("too-large", error="out of memory while decoding")
    except UnidentifiedImageError as exc:
        if _looks_like_image(data):
            return _skip("truncated-image", error=str(exc), bytes=len(data))
        other = _other_format(data)
        if other is not None:
            return _skip("unsupported-format", format=other, decoded=", ".join(DECODED_FORMATS))
        return _skip("unreadable-image", error=str(exc))
    except Exception as exc:  # any decoder failure is data, never a crash
        if _is_truncation(exc):
            return _skip("truncated-image", error=str(exc), bytes=len(data))
        return _skip("unreadable-image", error=f"{type(exc).__name__}: {exc}")


def _load(data: bytes, full: bool = False) -> LoadedScan | EvidenceSkip:
    img = open_image(io.BytesIO(data))
    width, height = img.size
    if width * height > MAX_PIXELS:
        return _skip("too-large", width=width, height=height, max_pixels=MAX_PIXELS)
    if min(width, height) < MIN_SIDE:
        return _skip("too-small", width=width, height=height, min_side=MIN_SIDE)
    fmt = img.format
    if getattr(img, "n_frames", 1) > 1:
        img.seek(0)
    if fmt == "JPEG" and max(width, height) > 2 * WORK_LONG_SIDE and not full:
        img.draft(img.mode if img.mode in ("RGB", "L") else None, _draft_size(width, height))
    img.load()
    orientation = 1
    try:
        orientation = int(img.getexif().get(0x0112, 1) or 1)
    except Exception:  # broken EXIF means "no orientation"
        orientation = 1
    if orientation != 1:
        try:
            img = ImageOps.exif_transpose(img) or img
            if orientation in (5, 6, 7, 8):
                width, height = height, width
        except Exception:  # keep the unrotated pixels rather than fail the card
            pass
    rgb = _to_rgb(img)
    factor = max(rgb.size) // WORK_LONG_SIDE
    if factor >= 2 and not full:
        rgb = rgb.reduce(factor)
    return LoadedScan(image=rgb, width=width, height=height, format=fmt)


def load_image(data: bytes) -> Image.Image | EvidenceSkip:
    """Decode scan bytes into a normalised RGB image, or the named reason it cannot be read."""
    loaded = load_scan(data)
    return loaded if isinstance(loaded, EvidenceSkip) else loaded.image
