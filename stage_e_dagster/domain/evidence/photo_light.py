"""Light fixes for crops of photographed cards, before a reader reads them: uneven light, low contrast, glare, blur.

A phone photo's card is lit by a lamp off to one side, seen through a glossy sleeve that throws a bright band
across it, and often a little blurred by a moving hand. Each fix here is one function on a PIL image (a crop of
the straightened card), cheap enough to try per line:

- `flatten_light`: divides the image by its own large-scale blur (the light falling on it), so a line half in
  shadow reads as one;
- `local_contrast`: CLAHE on the lightness, for print washed out by glare or a dim corner;
- `glare_mask` / `glare_share`: where a specular highlight has burnt the print out (bright and colourless), so a
  reader knows which part of a line it cannot trust, or that a crop is not worth reading;
- `sharpen`: an unsharp mask for mild motion or focus blur.
"""

from __future__ import annotations

import cv2
import numpy as np
from PIL import Image

# A pixel this bright (0-255, the max of R, G, B) and this colourless (HSV saturation 0-255) is glare.
GLARE_VALUE = 235
GLARE_SATURATION = 45


def _rgb(img: Image.Image) -> np.ndarray:
    return np.asarray(img.convert("RGB"))


def flatten_light(img: Image.Image, scale: float = 0.12) -> Image.Image:
    """`img` divided by its light: a Gaussian blur `scale` of the image's long side wide (computed on a small copy),
    then stretched so the paper is near white again. Keeps the mode (L or RGB)."""
    mode = "L" if img.mode == "L" else "RGB"
    arr = np.asarray(img.convert(mode), dtype=np.float32)
    h, w = arr.shape[:2]
    factor = max(1, round(max(h, w) / 128))
    small = cv2.resize(arr, (max(1, w // factor), max(1, h // factor)), interpolation=cv2.INTER_AREA)
    sigma = max(1.0, scale * max(small.shape[:2]))
    light = cv2.resize(cv2.GaussianBlur(small, (0, 0), sigma), (w, h), interpolation=cv2.INTER_LINEAR)
    flat = arr / np.maximum(light, 1.0)
    top = float(np.percentile(flat, 99)) or 1.0
    return Image.fromarray(np.clip(flat * (235.0 / top), 0, 255).astype(np.uint8), mode)


def local_contrast(img: Image.Image, clip: float = 2.5, tiles: int = 8) -> Image.Image:
    """CLAHE on the lightness (L of Lab for colour, the grey itself for L images). Keeps the mode."""
    clahe = cv2.createCLAHE(clipLimit=clip, tileGridSize=(tiles, tiles))
    if img.mode == "L":
        return Image.fromarray(clahe.apply(np.asarray(img)), "L")
    lab = cv2.cvtColor(_rgb(img), cv2.COLOR_RGB2LAB)
    lab[..., 0] = clahe.apply(np.ascontiguousarray(lab[..., 0]))
    return Image.fromarray(cv2.cvtColor(lab, cv2.COLOR_LAB2RGB), "RGB")


def glare_mask(img: Image.Image, grow: int = 2) -> np.ndarray:
    """Boolean (h, w): pixels burnt out by a highlight (bright and colourless), widened by `grow` pixels."""
    hsv = cv2.cvtColor(_rgb(img), cv2.COLOR_RGB2HSV)
    mask = ((hsv[..., 2] >= GLARE_VALUE) & (hsv[..., 1] <= GLARE_SATURATION)).astype(np.uint8)
    if grow > 0:
        mask = cv2.dilate(mask, np.ones((2 * grow + 1, 2 * grow + 1), np.uint8))
    return mask.astype(bool)


def glare_share(img: Image.Image) -> float:
    """The share of `img` burnt out by glare (0..1)."""
    return float(glare_mask(img, grow=0).mean())


def sharpen(img: Image.Image, amount: float = 1.0, sigma: float = 1.5) -> Image.Image:
    """An unsharp mask: `img` plus `amount` times its difference from a `sigma` blur. Keeps the mode."""
    mode = "L" if img.mode == "L" else "RGB"
    arr = np.asarray(img.convert(mode), dtype=np.float32)
    blurred = cv2.GaussianBlur(arr, (0, 0), sigma)
    return Image.fromarray(np.clip(arr + amount * (arr - blurred), 0, 255).astype(np.uint8), mode)
