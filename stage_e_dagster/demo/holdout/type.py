"""Type for the held-out scans: font faces from PyPI packages the first renderer never loads, and text drawn
supersampled onto a coverage mask (ink is composited afterwards, as print is), with the bullet and the
paintbrush drawn as shapes of their own.

Faces: Roboto (regular, medium), Source Sans Pro (regular, semibold), Source Serif Pro (regular, semibold),
Fjalla One (condensed) and Red Hat Display (regular, medium), from `font-roboto`, `font-source-sans-pro`,
`font-source-serif-pro`, `font-fjallaone` and `font-rhd` (the project's `dev` extra).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

SUPERSAMPLE = 3
FACES: dict[str, tuple[str, str]] = {
    "roboto": ("font_roboto", "Roboto-Regular.ttf"),
    "roboto-medium": ("font_roboto", "Roboto-Medium.ttf"),
    "source-sans": ("font_source_sans_pro", "SourceSansPro-Regular.ttf"),
    "source-sans-semibold": ("font_source_sans_pro", "SourceSansPro-Semibold.ttf"),
    "source-serif": ("font_source_serif_pro", "SourceSerifPro-Regular.ttf"),
    "source-serif-semibold": ("font_source_serif_pro", "SourceSerifPro-Semibold.ttf"),
    "fjalla": ("font_fjallaone", "FjallaOne-Regular.ttf"),
    "red-hat": ("font_rhd", "RedHatDisplay-Regular.ttf"),
    "red-hat-medium": ("font_rhd", "RedHatDisplay-Medium.ttf"),
}
SANS = ("roboto", "roboto-medium", "source-sans", "source-sans-semibold", "fjalla", "red-hat", "red-hat-medium")
SERIF = ("source-serif", "source-serif-semibold")


@cache
def face_path(face: str) -> str:
    """The font file of `face`; raises naming the package to install when it is missing."""
    package, filename = FACES[face]
    try:
        module = importlib.import_module(package)
    except ImportError as exc:
        raise RuntimeError(f"the held-out scans need the {package.replace('_', '-')} package (pip install "
                           f"{package.replace('_', '-')}, or the project's dev extra)") from exc
    path = Path(module.__file__ or "").parent / "files" / filename
    if not path.is_file():
        raise RuntimeError(f"{filename} is missing from the {package} package")
    return str(path)


@lru_cache(maxsize=1024)
def font(face: str, pixels: int) -> ImageFont.FreeTypeFont:
    """`face` at `pixels` em size."""
    return ImageFont.truetype(face_path(face), max(4, pixels))


@lru_cache(maxsize=64)
def cap_ratio(face: str) -> float:
    """Height of the face's digits as a fraction of its em size."""
    probe = font(face, 400)
    _, top, _, bottom = probe.getbbox("0123456789", anchor="ls")
    return (bottom - top) / 400


@dataclass(frozen=True)
class Run:
    """A piece of a line: text in the face, or one of the shapes "bullet" and "brush"."""

    text: str
    shape: str | None = None


def runs_of(line: str) -> list[Run]:
    """`line` split into text runs and shapes ("•" is the bullet, "✎" the paintbrush)."""
    out: list[Run] = []
    for ch in line:
        shape = {"•": "bullet", "✎": "brush"}.get(ch)
        if shape:
            out.append(Run(ch, shape))
        elif out and out[-1].shape is None:
            out[-1] = Run(out[-1].text + ch)
        else:
            out.append(Run(ch))
    return out


def line_width(line: str, face: str, cap: float) -> float:
    """Width in pixels of `line` set in `face` with digits `cap` pixels high."""
    size = cap / cap_ratio(face)
    probe = font(face, round(size * SUPERSAMPLE))
    total = 0.0
    for run in runs_of(line):
        if run.shape == "bullet":
            total += 0.55 * cap
        elif run.shape == "brush":
            total += 1.25 * cap
        else:
            total += probe.getlength(run.text) / SUPERSAMPLE
    return total


def _shape(draw: ImageDraw.ImageDraw, shape: str, x: float, baseline: float, cap: float) -> float:
    """Draw a bullet or a paintbrush at `x` (supersampled units); return its advance."""
    if shape == "bullet":
        r = cap * 0.13
        cx, cy = x + 0.275 * cap, baseline - cap * 0.42
        draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=255)
        return 0.55 * cap
    # The paintbrush: a bristle head (a tilted teardrop) at the lower left, a thin handle up to the right.
    head = [(x + 0.12 * cap, baseline), (x + 0.2 * cap, baseline - 0.36 * cap), (x + 0.42 * cap, baseline - 0.5 * cap),
            (x + 0.5 * cap, baseline - 0.3 * cap), (x + 0.34 * cap, baseline - 0.1 * cap)]
    draw.polygon(head, fill=255)
    draw.line((x + 0.44 * cap, baseline - 0.42 * cap, x + 1.05 * cap, baseline - 1.02 * cap), fill=255,
              width=max(1, round(cap * 0.12)))
    return 1.25 * cap


def text_mask(lines: list[tuple[str, float]], face: str, cap: float, gap: float, tracking: float = 0.0
              ) -> tuple[Image.Image, list[tuple[int, int, int, int]]]:
    """A coverage mask (L, 255 = ink) of left-aligned `lines` [(text, x offset)], digits `cap` px high, baselines
    `gap` px apart, and the pixel box of each line's ink in the mask. Drawn at `SUPERSAMPLE` times the size
    and reduced, so edges carry the grey a printed glyph has under a scanner."""
    s = SUPERSAMPLE
    size = cap / cap_ratio(face)
    face_font = font(face, round(size * s))
    width = max(line_width(text, face, cap) + offset for text, offset in lines) * (1 + tracking) + 2 * cap
    height = cap * 1.6 + gap * (len(lines) - 1) + cap * 0.6
    canvas = Image.new("L", (max(1, round(width * s)), max(1, round(height * s))), 0)
    draw = ImageDraw.Draw(canvas)
    boxes = []
    for index, (text, offset) in enumerate(lines):
        baseline = (cap * 1.3 + gap * index) * s
        x = (cap * 0.5 + offset) * s
        for run in runs_of(text):
            if run.shape:
                x += _shape(draw, run.shape, x, baseline, cap * s)
            else:
                for ch in run.text:
                    draw.text((x, baseline), ch, font=face_font, fill=255, anchor="ls")
                    x += face_font.getlength(ch) + tracking * cap * s
        box = canvas.crop((0, round(baseline - 1.4 * cap * s), canvas.width, round(baseline + 0.4 * cap * s)))
        bbox = box.getbbox()
        top = round(baseline - 1.4 * cap * s)
        boxes.append((0, 0, 0, 0) if bbox is None else (bbox[0] // s, (top + bbox[1]) // s, -(-bbox[2] // s),
                                                         -(-(top + bbox[3]) // s)))
    small = canvas.resize((max(1, round(canvas.width / s)), max(1, round(canvas.height / s))), Image.BOX)
    return small, boxes
