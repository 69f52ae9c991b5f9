"""Text drawing for the renderer: Pillow's bundled scalable font (or a given TrueType/OpenType file), with the
bullet, star, em dash and artist's paintbrush drawn as shapes so collector lines like "★12/280 R" and
"M20 • EN ✎ Anna Chen" render the same in every font."""

from __future__ import annotations

import math
from functools import lru_cache

from PIL import ImageDraw, ImageFont

RGB = tuple[int, int, int]
Font = ImageFont.FreeTypeFont
DIGIT_HEIGHT = 0.72  # cap/digit height of the bundled font as a fraction of its size


SHAPES = "•★—✎"  # drawn as shapes: most fonts lack them


@lru_cache(maxsize=512)
def get_font(size: int, path: str | None = None) -> Font:
    """The font file at `path` (Pillow's bundled scalable font when None) at `size` pixels (cached)."""
    if path is not None:
        return ImageFont.truetype(path, max(6, size))
    loaded = ImageFont.load_default(size=max(6, size))
    assert isinstance(loaded, ImageFont.FreeTypeFont)
    return loaded


@lru_cache(maxsize=64)
def digit_height(path: str | None) -> float:
    """Height of the digits of the font at `path` as a fraction of its size (DIGIT_HEIGHT for the bundled one)."""
    if path is None:
        return DIGIT_HEIGHT
    font = get_font(200, path)
    _, top, _, bottom = font.getbbox("0123456789", anchor="ls")
    return (bottom - top) / 200


def _piece_width(text: str, font: Font) -> float:
    if text in ("•", "★", "✎"):
        return font.size * {"•": 0.45, "★": 0.78, "✎": 0.9}[text]
    if text == "—":
        return font.size * 0.9
    return font.getlength(text)


def _pieces(text: str) -> list[str]:
    out: list[str] = []
    for ch in text:
        if ch in SHAPES or not out or out[-1] in SHAPES:
            out.append(ch)
        else:
            out[-1] += ch
    return out


def text_width(text: str, font: Font) -> float:
    """Width of `text` as `draw_text` renders it."""
    return sum(_piece_width(p, font) for p in _pieces(text))


def draw_text(draw: ImageDraw.ImageDraw, x: float, baseline: float, text: str, font: Font, fill: RGB) -> None:
    """Draw `text` with its baseline at `baseline`, drawing the bullet, star, em dash and brush as shapes."""
    cap = font.size * DIGIT_HEIGHT
    for piece in _pieces(text):
        width = _piece_width(piece, font)
        mid_x, mid_y = x + width / 2, baseline - cap / 2
        if piece == "•":
            r = font.size * 0.09
            draw.ellipse((mid_x - r, mid_y - r, mid_x + r, mid_y + r), fill=fill)
        elif piece == "★":
            r, pts = cap * 0.55, []
            for k in range(10):
                rad, ang = (r if k % 2 == 0 else r * 0.42), -math.pi / 2 + math.pi * k / 5
                pts.append((mid_x + rad * math.cos(ang), mid_y + rad * math.sin(ang)))
            draw.polygon(pts, fill=fill)
        elif piece == "✎":
            _brush(draw, x, baseline, width, cap, fill)
        elif piece == "—":
            draw.rectangle((x + width * 0.08, mid_y - font.size * 0.03, x + width * 0.92, mid_y + font.size * 0.03),
                           fill=fill)
        else:
            draw.text((x, baseline), piece, font=font, fill=fill, anchor="ls")
        x += width


def _brush(draw: ImageDraw.ImageDraw, x: float, baseline: float, width: float, cap: float, fill: RGB) -> None:
    """The artist credit's paintbrush, about a digit tall: a handle slanting down to the left under a short
    ferrule bar, ending in a tip (OCR often reads it as a 7 or a slash)."""
    x0, x1 = x + width * 0.2, x + width * 0.75
    handle = max(1.0, cap * 0.14)
    draw.line((x1 - cap * 0.45, baseline - cap, x1, baseline - cap), fill=fill, width=max(1, round(handle)))
    draw.line((x1, baseline - cap, x0 + handle, baseline - handle * 1.5), fill=fill, width=max(1, round(handle)))
    draw.ellipse((x0 - handle, baseline - 2.4 * handle, x0 + 1.4 * handle, baseline), fill=fill)


def fit_font(text: str, height_px: float, max_width: float, path: str | None = None) -> Font:
    """The font (bundled, or the file at `path`) whose digits are `height_px` tall, shrunk until `text` fits in
    `max_width`."""
    size = int(height_px / digit_height(path))
    chosen = get_font(size, path)
    while size > 6 and text_width(text, chosen) > max_width:
        size -= 1
        chosen = get_font(size, path)
    return chosen


def wrap(text: str, font: Font, width: float) -> list[str]:
    """`text` broken into lines no wider than `width`."""
    lines: list[str] = []
    for word in text.split():
        if lines and text_width(f"{lines[-1]} {word}", font) <= width:
            lines[-1] = f"{lines[-1]} {word}"
        else:
            lines.append(word)
    return lines


