"""Type for the held-out scans: font faces from PyPI packages the first renderer never loads, and text drawn
supersampled onto a coverage mask (ink is composited afterwards, as print is), one line at a time, with the
bullet, the star and the paintbrush drawn as shapes of their own (none of the faces has a star). A line may be
squeezed or stretched horizontally (real legal lines are set condensed to fit), and the ink box of a marked span
(the collector number) is measured as it is drawn.

Faces: Roboto (regular, medium), Source Sans Pro (regular, semibold), Source Serif Pro (regular, semibold),
Fjalla One (condensed) and Red Hat Display (regular, medium), from `font-roboto`, `font-source-sans-pro`,
`font-source-serif-pro`, `font-fjallaone` and `font-rhd` (the project's `dev` extra).
"""

from __future__ import annotations

import importlib
import math
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
    """A piece of a line: text in the face, or one of the shapes "bullet", "star" and "brush"."""

    text: str
    shape: str | None = None


_SHAPES = {"•": "bullet", "★": "star", "✎": "brush"}
_ADVANCE = {"bullet": 0.55, "star": 1.0, "brush": 1.25}
"""Each shape's advance, in digit heights."""


def runs_of(line: str) -> list[Run]:
    """`line` split into text runs and shapes ("•" the bullet, "★" the star, "✎" the paintbrush)."""
    out: list[Run] = []
    for ch in line:
        shape = _SHAPES.get(ch)
        if shape:
            out.append(Run(ch, shape))
        elif out and out[-1].shape is None:
            out[-1] = Run(out[-1].text + ch)
        else:
            out.append(Run(ch))
    return out


def line_width(line: str, face: str, cap: float, tracking: float = 0.0) -> float:
    """Width in pixels of `line` set in `face` with digits `cap` pixels high and `tracking` (in digit heights)
    after each character."""
    size = cap / cap_ratio(face)
    probe = font(face, round(size * SUPERSAMPLE))
    total = 0.0
    for run in runs_of(line):
        if run.shape:
            total += _ADVANCE[run.shape] * cap
        else:
            total += probe.getlength(run.text) / SUPERSAMPLE
    return total + tracking * cap * len(line)


def _shape(draw: ImageDraw.ImageDraw, shape: str, x: float, baseline: float, cap: float) -> float:
    """Draw a bullet, a star or a paintbrush at `x` (supersampled units); return its advance."""
    if shape == "bullet":
        r = cap * 0.13
        cx, cy = x + 0.275 * cap, baseline - cap * 0.42
        draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=255)
    elif shape == "star":
        cx, cy, outer = x + 0.5 * cap, baseline - 0.45 * cap, 0.5 * cap
        points = [(cx + (outer if k % 2 == 0 else outer * 0.42) * math.sin(math.pi * k / 5),
                   cy - (outer if k % 2 == 0 else outer * 0.42) * math.cos(math.pi * k / 5)) for k in range(10)]
        draw.polygon(points, fill=255)
    else:  # the paintbrush: a bristle head (a tilted teardrop) at the lower left, a thin handle up to the right
        head = [(x + 0.12 * cap, baseline), (x + 0.2 * cap, baseline - 0.36 * cap),
                (x + 0.42 * cap, baseline - 0.5 * cap), (x + 0.5 * cap, baseline - 0.3 * cap),
                (x + 0.34 * cap, baseline - 0.1 * cap)]
        draw.polygon(head, fill=255)
        draw.line((x + 0.44 * cap, baseline - 0.42 * cap, x + 1.05 * cap, baseline - 1.02 * cap), fill=255,
                  width=max(1, round(cap * 0.12)))
    return _ADVANCE[shape] * cap


Box = tuple[int, int, int, int]


@dataclass(frozen=True)
class SetLine:
    """One line set on a coverage mask (L, 255 = ink): where its pen starts on the baseline and how far it
    travels (mask pixels), its ink box, and the ink box of the marked span (None when nothing is marked)."""

    mask: Image.Image
    origin: tuple[float, float]
    advance: float
    ink: Box
    mark: Box | None


def set_line(text: str, face: str, cap: float, tracking: float = 0.0, squeeze: float = 1.0,
             mark: tuple[int, int] | None = None) -> SetLine:
    """`text` in `face` with digits `cap` px high, `tracking` digit heights after each character, scaled by
    `squeeze` horizontally; `mark` is a [start, end) span of characters whose ink box is measured. Drawn at
    `SUPERSAMPLE` times the size and reduced, so edges carry the grey a printed glyph has under a scanner."""
    s = SUPERSAMPLE
    face_font = font(face, round(cap / cap_ratio(face) * s))
    width = line_width(text, face, cap, tracking) + 2 * cap
    canvas = Image.new("L", (max(1, round(width * s)), max(1, round(cap * 2.4 * s))), 0)
    draw = ImageDraw.Draw(canvas)
    baseline, x = cap * 1.6 * s, cap * 0.5 * s
    pens: list[float] = []
    for run in runs_of(text):
        if run.shape:
            pens.append(x)
            x += _shape(draw, run.shape, x, baseline, cap * s) + tracking * cap * s
            continue
        for ch in run.text:
            pens.append(x)
            draw.text((x, baseline), ch, font=face_font, fill=255, anchor="ls")
            x += face_font.getlength(ch) + tracking * cap * s
    pens.append(x)
    fx = squeeze / s

    def box_of(x0: float, x1: float) -> Box | None:
        found = canvas.crop((max(0, math.floor(x0)), 0, min(canvas.width, math.ceil(x1)), canvas.height)).getbbox()
        if found is None:
            return None
        left = max(0, math.floor(x0))
        return (math.floor((left + found[0]) * fx), found[1] // s, math.ceil((left + found[2]) * fx),
                -(-found[3] // s))

    ink = box_of(0, canvas.width) or (0, 0, 0, 0)
    marked = None if mark is None else box_of(pens[mark[0]], pens[mark[1]])
    small = canvas.resize((max(1, round(canvas.width * fx)), max(1, round(canvas.height / s))), Image.Resampling.BOX)
    return SetLine(small, (cap * 0.5 * squeeze, cap * 1.6), (x - cap * 0.5 * s) * fx, ink, marked)
