"""Damage for the held-out scans, written apart from the first renderer's: uneven light, a turn about an
off-centre point with a small shift, Gaussian blur, colour sensor noise, then JPEG with chroma subsampling.

`Damage.draw` gives the issue's heavy damage: blur 0.8-1.4 px (Gaussian sigma), rotation up to 2 degrees, noise,
JPEG quality 50-80.
"""

from __future__ import annotations

import io
import math
import random
from dataclasses import dataclass

import numpy as np
from PIL import Image
from scipy import ndimage

BED = (238, 236, 229)


@dataclass(frozen=True)
class Damage:
    """One scan's damage: blur sigma (px), rotation (degrees, about `pivot`, fractions of the image), shift
    (fractions), noise sigma (grey levels, per channel), light falloff (share of brightness lost at the far
    corner) and JPEG quality."""

    blur_sigma: float
    rotation_deg: float
    pivot: tuple[float, float]
    shift: tuple[float, float]
    noise: float
    light: float
    jpeg_quality: int

    @classmethod
    def draw(cls, rng: random.Random) -> Damage:
        """Heavy damage: blur 0.8-1.4 px, rotation within 2 degrees, noise, light falloff, JPEG 50-80."""
        return cls(
            blur_sigma=round(rng.uniform(0.8, 1.4), 3),
            rotation_deg=round(rng.uniform(-2.0, 2.0), 3),
            pivot=(round(rng.uniform(0.4, 0.6), 3), round(rng.uniform(0.4, 0.6), 3)),
            shift=(round(rng.uniform(-0.003, 0.003), 4), round(rng.uniform(-0.003, 0.003), 4)),
            noise=round(rng.uniform(2.5, 9.0), 2),
            light=round(rng.uniform(0.0, 0.14), 3),
            jpeg_quality=rng.randint(50, 80),
        )

    def apply(self, img: Image.Image, seed: int) -> Image.Image:
        """`img` (RGB) damaged, same size."""
        arr = np.asarray(img.convert("RGB"), dtype=np.float32)
        h, w = arr.shape[:2]
        if self.light:
            yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
            corner = np.hypot(xx / w, yy / h) / math.sqrt(2)  # 0 at the top left, 1 at the bottom right
            arr *= (1.0 - self.light * corner)[..., None]
        turned = Image.fromarray(np.clip(arr, 0, 255).astype(np.uint8), "RGB").rotate(
            self.rotation_deg, resample=Image.Resampling.BICUBIC, center=(self.pivot[0] * w, self.pivot[1] * h),
            translate=(self.shift[0] * w, self.shift[1] * h), fillcolor=BED)
        arr = np.asarray(turned, dtype=np.float32)
        arr = ndimage.gaussian_filter(arr, sigma=(self.blur_sigma, self.blur_sigma, 0), truncate=3.0)
        noise = np.random.default_rng(seed).normal(0.0, self.noise, arr.shape).astype(np.float32)
        arr = np.clip(arr + noise, 0, 255).astype(np.uint8)
        buffer = io.BytesIO()
        Image.fromarray(arr, "RGB").save(buffer, "JPEG", quality=self.jpeg_quality, subsampling=2)
        buffer.seek(0)
        return Image.open(buffer).convert("RGB")
