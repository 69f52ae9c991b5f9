"""Bad and odd input bytes: each becomes its named skip or correct evidence, and nothing ever raises."""

from __future__ import annotations

import io
import random
import struct
import zlib

import numpy as np
import pytest
from PIL import Image

from stage_e_dagster.demo.catalog import generate_catalog
from stage_e_dagster.demo.render import render_scan
from stage_e_dagster.domain.evidence.extract import extract_evidence
from stage_e_dagster.domain.evidence.load import MAX_PIXELS, LoadedScan, load_image, load_scan
from stage_e_dagster.domain.evidence.model import Evidence, EvidenceSkip
from stage_e_dagster.domain.evidence.ocr import OcrEngine, TesserocrEngine


@pytest.fixture(scope="module")
def engine() -> OcrEngine:
    return TesserocrEngine()


class NoOcr:
    """An engine for input that must be refused before any text is read: reading fails the test."""

    name = "none"

    def read(self, image: Image.Image, psm: int = 6, whitelist: str | None = None) -> str:
        raise AssertionError("OCR was reached on input that must be refused before it")


@pytest.fixture(scope="module")
def card() -> dict:
    """A modern printing (its collector line shows number and set code)."""
    return next(c for c in generate_catalog(200, seed=5) if c["frame"] == "2015" and c["border_color"] == "black")


@pytest.fixture(scope="module")
def known(card: dict) -> set[str]:
    return {c["set"] for c in generate_catalog(200, seed=5)}


@pytest.fixture(scope="module")
def scan(card: dict) -> Image.Image:
    return render_scan(card, long_side=1040, bleed=False, seed=1)


def encode(img: Image.Image, fmt: str, **params: object) -> bytes:
    buffer = io.BytesIO()
    img.save(buffer, fmt, **params)
    return buffer.getvalue()


def png_chunk(kind: bytes, payload: bytes) -> bytes:
    return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))


def png_bomb(width: int, height: int) -> bytes:
    """A tiny PNG whose header claims `width` x `height` 1-bit pixels (the data would inflate enormously)."""
    ihdr = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    idat = zlib.compress(b"\x00" * 4096, 9)
    return b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr) + png_chunk(b"IDAT", idat) + png_chunk(b"IEND", b"")


def assert_reads(result: Evidence | EvidenceSkip, card: dict) -> Evidence:
    assert isinstance(result, Evidence), result
    assert result.collector_number == card["collector_number"], result.collector_raw
    assert result.set_code == card["set"], result.collector_raw
    return result


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda scan: b"", "empty-file"),
        (lambda scan: b"collector,set\n123,m20\n" * 20, "unreadable-image"),
        (lambda scan: b"%PDF-1.7\n" + bytes(range(256)) * 8, "unreadable-image"),
        (lambda scan: encode(scan, "PNG")[: len(encode(scan, "PNG")) // 2], "truncated-image"),
        (lambda scan: encode(scan, "JPEG", quality=90)[:30_000], "truncated-image"),
        (lambda scan: encode(scan, "JPEG")[:120], "truncated-image"),  # cut inside the header
        (lambda scan: b"\x89PNG\r\n\x1a\n" + b"\x00" * 10, "truncated-image"),
        (lambda scan: encode(scan.resize((20, 28)), "PNG"), "too-small"),
    ],
)
def test_bad_bytes_become_named_skips(scan: Image.Image, make, reason: str) -> None:
    data = make(scan)
    result = extract_evidence(data, known_set_codes={"m20"}, engine=NoOcr())
    assert isinstance(result, EvidenceSkip)
    assert result.reason == reason, result.detail
    assert isinstance(load_image(data), EvidenceSkip)


@pytest.mark.parametrize("side", [20_000, 8_000])  # beyond Pillow's own bomb limit, and beyond only ours
def test_decompression_bomb_is_refused_from_the_header(side: int) -> None:
    data = png_bomb(side, side)
    assert len(data) < 1_000 and side * side > MAX_PIXELS
    result = extract_evidence(data, known_set_codes={"m20"}, engine=NoOcr())
    assert isinstance(result, EvidenceSkip) and result.reason == "too-large"


def test_cmyk_jpeg(scan: Image.Image, card: dict, known: set[str], engine: OcrEngine) -> None:
    data = encode(scan.convert("CMYK"), "JPEG", quality=92)
    assert Image.open(io.BytesIO(data)).mode == "CMYK"
    assert_reads(extract_evidence(data, known_set_codes=known, engine=engine), card)


def test_sixteen_bit_png_is_scaled_not_clipped(
    scan: Image.Image, card: dict, known: set[str], engine: OcrEngine
) -> None:
    wide = np.asarray(scan.convert("L"), dtype=np.uint16) * 257
    data = encode(Image.fromarray(wide), "PNG")
    assert Image.open(io.BytesIO(data)).mode.startswith("I;16")
    loaded = load_scan(data)
    assert isinstance(loaded, LoadedScan) and loaded.image.mode == "RGB"
    assert np.asarray(loaded.image).std() > 20  # not a white sheet
    assert_reads(extract_evidence(data, known_set_codes=known, engine=engine), card)


def test_palette_and_alpha_pngs(scan: Image.Image, card: dict, known: set[str], engine: OcrEngine) -> None:
    palette = scan.convert("P", palette=Image.Palette.ADAPTIVE, colors=64)
    rgba = scan.convert("RGBA")
    rgba.putalpha(255)
    for img in (palette, rgba, scan.convert("LA")):
        assert_reads(extract_evidence(encode(img, "PNG"), known_set_codes=known, engine=engine), card)


def test_animated_webp_reads_its_first_frame(scan: Image.Image, card: dict, known: set[str],
                                             engine: OcrEngine) -> None:
    other = Image.new("RGB", scan.size, (200, 30, 30))
    data = encode(scan, "WEBP", save_all=True, append_images=[other], duration=100, loop=0, lossless=True)
    assert getattr(Image.open(io.BytesIO(data)), "n_frames", 1) == 2
    assert_reads(extract_evidence(data, known_set_codes=known, engine=engine), card)


@pytest.mark.parametrize("fmt", ["TIFF", "GIF", "BMP", "PCX", "SGI", "DDS", "TGA"])
def test_only_png_jpeg_and_webp_are_decoded_whatever_the_name(scan: Image.Image, fmt: str) -> None:
    """A well-formed image of any other format Pillow knows is a named skip, decoded by no one: Stage C (here), the
    identity hash and the review page's crops all open images through `open_image`, and the review page serves no
    bytes but these three formats."""
    from stage_e_dagster.domain.evidence.load import open_image
    from stage_e_dagster.domain.scan_files import content_phash
    from stage_e_dagster.review_web.files import ScanRefused, crop, media_type

    data = encode(scan.resize((300, 420)), fmt)
    assert Image.open(io.BytesIO(data)).format == fmt, "Pillow itself would decode it"
    result = extract_evidence(data, known_set_codes={"m20"}, engine=NoOcr())
    assert isinstance(result, EvidenceSkip) and result.reason == "unsupported-format", result
    assert content_phash(io.BytesIO(data)) is None
    with pytest.raises(Image.UnidentifiedImageError):
        open_image(io.BytesIO(data))
    for serve in (media_type, lambda raw: crop(raw, "collector")):
        with pytest.raises(ScanRefused):
            serve(data)


@pytest.mark.parametrize(("orientation", "stored"), [(6, Image.Transpose.ROTATE_90), (8, Image.Transpose.ROTATE_270),
                                                      (3, Image.Transpose.ROTATE_180)])
def test_exif_rotated_jpeg_reads_upright(
    scan: Image.Image, card: dict, known: set[str], engine: OcrEngine, orientation: int, stored: Image.Transpose
) -> None:
    exif = Image.Exif()
    exif[0x0112] = orientation
    data = encode(scan.transpose(stored), "JPEG", quality=92, exif=exif.tobytes())
    result = assert_reads(extract_evidence(data, known_set_codes=known, engine=engine), card)
    assert (result.width, result.height) == scan.size
    assert result.bleed_class == "trimmed"


def test_large_jpeg_is_draft_decoded_but_reports_its_real_size(scan: Image.Image, card: dict, known: set[str],
                                                               engine: OcrEngine) -> None:
    big = scan.resize((scan.width * 4, scan.height * 4), Image.Resampling.BICUBIC)
    data = encode(big, "JPEG", quality=90)
    loaded = load_scan(data)
    assert isinstance(loaded, LoadedScan)
    assert (loaded.width, loaded.height) == big.size
    assert max(loaded.image.size) < max(big.size) / 1.5
    result = assert_reads(extract_evidence(data, known_set_codes=known, engine=engine), card)
    assert (result.width, result.height) == big.size


def test_mutated_files_never_raise(scan: Image.Image, engine: OcrEngine) -> None:
    rng = random.Random(3)
    small = scan.resize((300, 420))
    seeds = [encode(small, "JPEG", quality=80), encode(small, "PNG"), encode(small, "GIF"), encode(small, "WEBP"),
             encode(small, "BMP"), encode(small, "TIFF")]
    for base in seeds:
        for _ in range(6):
            data = bytearray(base)
            for _ in range(rng.randint(1, 12)):
                data[rng.randrange(len(data))] = rng.randrange(256)
            cut = bytes(data[: rng.randint(1, len(data))]) if rng.random() < 0.3 else bytes(data)
            result = extract_evidence(cut, known_set_codes={"m20"}, engine=engine)
            assert isinstance(result, Evidence | EvidenceSkip)


@pytest.mark.parametrize(
    ("size", "mode"),
    [((32, 5000), "RGB"), ((5000, 32), "1"), ((5000, 32), "RGB"), ((6000, 6000), "L"), ((33, 33), "I;16"),
     ((40, 900), "I;16"), ((900, 40), "CMYK"), ((33, 700), "RGBA")],
)
def test_blank_and_extreme_shapes_give_evidence_not_errors(engine: OcrEngine, size: tuple[int, int], mode: str) -> None:
    """A blank image in no card's proportions holds no card: the finder's named skip, never an exception."""
    fmt = "JPEG" if mode == "CMYK" else "PNG"
    result = extract_evidence(encode(Image.new(mode, size), fmt), known_set_codes={"m20"}, engine=engine)
    assert isinstance(result, EvidenceSkip) and result.reason == "photo-card-not-found", result
