"""Light fixes for photographed cards, each on a small synthetic crop where its effect can be measured."""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

from stage_e_dagster.domain.evidence.photo_light import (
    flatten_light,
    glare_mask,
    glare_share,
    local_contrast,
    sharpen,
)


def _print(width: int = 320, height: int = 120) -> Image.Image:
    """Dark strokes on white paper."""
    img = Image.new("L", (width, height), 240)
    draw = ImageDraw.Draw(img)
    for x in range(20, width - 20, 24):
        draw.rectangle((x, 40, x + 6, 80), fill=20)
    return img


def _paper(arr: np.ndarray, x0: int, x1: int) -> float:
    return float(np.median(arr[5:30, x0:x1]))


def test_flatten_light_evens_out_a_lamp_off_to_one_side() -> None:
    lit = np.asarray(_print(), np.float32) * np.linspace(0.35, 1.0, 320, dtype=np.float32)[None, :]
    before = Image.fromarray(lit.astype(np.uint8), "L")
    after = np.asarray(flatten_light(before), np.float32)
    assert abs(_paper(lit, 0, 40) - _paper(lit, 280, 320)) > 100
    assert abs(_paper(after, 0, 40) - _paper(after, 280, 320)) < 25
    ink = float(np.median(after[50:70, 20:26]))
    assert ink < 0.35 * _paper(after, 0, 40)  # the strokes stay dark where the light was dim


def test_local_contrast_lifts_washed_out_print() -> None:
    soft = np.asarray(_print().filter(ImageFilter.GaussianBlur(1.5)), np.float32)
    grain = np.random.default_rng(0).normal(0.0, 2.0, soft.shape)
    faint = Image.fromarray(np.clip(120 + soft / 240 * 18 + grain, 0, 255).astype(np.uint8), "L")
    after = np.asarray(local_contrast(faint), np.float32)
    before = np.asarray(faint, np.float32)

    def contrast(arr: np.ndarray) -> float:  # paper between two strokes against a stroke, on the same rows
        return float(np.median(arr[50:70, 32:40])) - float(np.median(arr[50:70, 20:26]))

    assert contrast(before) < 20
    assert contrast(after) > 2 * contrast(before)
    assert local_contrast(faint.convert("RGB")).mode == "RGB"


def test_glare_mask_marks_burnt_out_light_not_bright_colour() -> None:
    img = Image.new("RGB", (200, 100), (90, 60, 120))
    draw = ImageDraw.Draw(img)
    draw.rectangle((20, 0, 59, 99), fill=(252, 251, 249))  # a highlight: bright, colourless
    draw.rectangle((120, 0, 159, 99), fill=(250, 235, 40))  # bright yellow print: not glare
    mask = glare_mask(img, grow=0)
    assert mask[:, 20:60].all()
    assert not mask[:, 120:160].any()
    assert not mask[:, 0:20].any()
    assert abs(glare_share(img) - 0.2) < 0.01
    assert glare_mask(img, grow=2)[:, 18].all()  # widened by two pixels


def test_sharpen_steepens_a_blurred_edge_and_keeps_flat_areas() -> None:
    blurred = _print().filter(ImageFilter.GaussianBlur(2))
    after = sharpen(blurred, amount=1.5)
    slope = lambda img: float(np.max(np.abs(np.diff(np.asarray(img, np.float32)[60]))))  # noqa: E731
    assert slope(after) > 1.2 * slope(blurred)
    assert abs(float(np.asarray(after)[10, 5]) - float(np.asarray(blurred)[10, 5])) <= 1
