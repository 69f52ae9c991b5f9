"""Signed 64-bit hash helpers and the canonical set-symbol hash (reference PNG vs the glyph cut from a scan)."""

from __future__ import annotations

import random

import imagehash
import pytest
from PIL import Image, ImageDraw

from stage_e_dagster.demo.catalog import generate_catalog
from stage_e_dagster.demo.render import Degradation, render_scan
from stage_e_dagster.demo.symbols import render_set_symbol
from stage_e_dagster.domain import layout
from stage_e_dagster.domain.evidence.hashing import (
    hamming,
    hash_to_int,
    phash64,
    symbol_phash,
    to_signed64,
    to_unsigned64,
)


@pytest.mark.parametrize(
    ("unsigned", "signed"),
    [(0, 0), (1, 1), ((1 << 63) - 1, (1 << 63) - 1), (1 << 63, -(1 << 63)), ((1 << 64) - 1, -1)],
)
def test_signed_round_trip(unsigned: int, signed: int) -> None:
    assert to_signed64(unsigned) == signed
    assert to_unsigned64(signed) == unsigned
    assert -(1 << 63) <= to_signed64(unsigned) < 1 << 63


def test_hamming_mixes_signed_and_unsigned() -> None:
    assert hamming(0, -1) == 64
    assert hamming(-1, (1 << 64) - 1) == 0
    assert hamming(0b1011, 0b0001) == 2
    assert hamming(to_signed64(1 << 63), 0) == 1


def test_hash_to_int_matches_imagehash_hex() -> None:
    img = Image.effect_mandelbrot((64, 64), (-2, -1.5, 1, 1.5), 50)
    h = imagehash.phash(img)
    assert to_unsigned64(hash_to_int(h)) == int(str(h), 16)
    assert phash64(img.convert("RGB")) == hash_to_int(h)


def _glyph(size: int, fg: tuple[int, int, int], bg: tuple[int, int, int]) -> Image.Image:
    img = Image.new("RGB", (size, size), bg)
    draw = ImageDraw.Draw(img)
    s = size
    draw.polygon([(s * 0.5, s * 0.05), (s * 0.95, s * 0.9), (s * 0.05, s * 0.9)], fill=fg)
    draw.ellipse([s * 0.3, s * 0.5, s * 0.5, s * 0.75], fill=bg)
    return img


def test_symbol_hash_ignores_scale_polarity_and_frame() -> None:
    reference = symbol_phash(_glyph(256, (0, 0, 0), (255, 255, 255)))
    # Light-on-dark, on a plate inside a frame, small: the same shape.
    plate = Image.new("RGB", (150, 80), (20, 20, 20))
    ImageDraw.Draw(plate).rectangle((0, 6, 135, 74), fill=(60, 60, 70))
    plate.paste(_glyph(52, (235, 200, 120), (60, 60, 70)), (62, 14))
    assert hamming(reference, symbol_phash(plate)) <= 6
    # An RGBA reference on a transparent background hashes like an opaque one.
    rgba = Image.new("RGBA", (128, 128), (0, 0, 0, 0))
    rgba.paste(_glyph(128, (0, 0, 0), (255, 255, 255)).convert("RGBA"), (0, 0))
    assert hamming(reference, symbol_phash(rgba)) <= 6


def test_symbol_hash_of_blank_input_does_not_raise() -> None:
    for img in (Image.new("RGB", (40, 30), (128, 128, 128)), Image.new("L", (1, 1)), Image.new("RGBA", (5, 50))):
        assert isinstance(symbol_phash(img), int)


def test_reference_symbols_match_their_rendered_scans() -> None:
    """A reference PNG and the same glyph cut from a rendered scan land close, and closer than any other set."""
    cards = generate_catalog(300, seed=4)
    references = {code: symbol_phash(render_set_symbol(code)) for code in {c["set"] for c in cards}}
    own: list[int] = []
    for i, card in enumerate(random.Random(4).sample(cards, 24)):
        bleed = bool(i % 2)
        degradation = Degradation.random(random.Random(i)) if i % 3 == 2 else None
        img = render_scan(card, long_side=(1040, 1680)[i // 2 % 2], bleed=bleed, seed=i, degradation=degradation)
        crop = img.crop(layout.trim_rect(*img.size, bleed).crop_box(layout.SYMBOL_CROP))
        found = symbol_phash(crop)
        distance = hamming(found, references[card["set"]])
        nearest_other = min(hamming(found, h) for code, h in references.items() if code != card["set"])
        assert distance < nearest_other, (card["set"], distance, nearest_other)
        if degradation is None:
            own.append(distance)
    own.sort()
    assert own[len(own) // 2] <= 6 and own[-1] <= 12, own
