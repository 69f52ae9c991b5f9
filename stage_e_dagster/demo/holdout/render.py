"""Draws a held-out card scan: its own frame geometry, plates, art, symbol and bottom-border type.

The frame follows a modern card's proportions measured afresh (border 3.5-5% of the width, art window
0.108-0.552 of the height, type bar 0.558-0.611, text box 0.62-0.872); the collector block sits on the bottom
border at a left margin of 4-7.5% of the width with its last baseline at 95.5-97.2% of the height, the legal
line right-aligned on the same baseline. Bleed scans carry 3 mm of bleed; the card may sit a little off centre.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from PIL import Image, ImageDraw

from stage_e_dagster.demo.holdout import type as typeset
from stage_e_dagster.demo.holdout.art import picture, symbol
from stage_e_dagster.demo.holdout.catalog import stable_digest
from stage_e_dagster.demo.holdout.lines import Printed

RGB = tuple[int, int, int]
CARD_MM = (63.0, 88.0)
BLEED_MM = 3.0
_BORDER: dict[str, RGB] = {"black": (14, 13, 15), "white": (236, 234, 226)}
_FRAME: dict[str, RGB] = {"W": (214, 206, 176), "U": (38, 92, 160), "B": (66, 58, 62), "R": (170, 58, 40),
                          "G": (40, 108, 64), "M": (186, 152, 72), "C": (150, 150, 156)}
_WORDS = ("target", "creature", "draw", "card", "sacrifice", "until", "end", "of", "turn", "you", "control",
          "gain", "life", "each", "opponent", "discard", "counter", "spell", "mana", "battlefield", "exile")


@dataclass(frozen=True)
class Look:
    """How one scan sets its bottom border: faces, digit height (fraction of the card's height), left edge of the
    collector block (fraction of the width), its last baseline (fraction of the height), baseline gap (in digit
    heights), letter tracking (in digit heights), border width (fraction of the width) and ink."""

    face: str
    legal_face: str
    cap: float
    left: float
    bottom: float
    gap: float
    tracking: float
    border: float
    ink: RGB


@dataclass(frozen=True)
class Drawn:
    """Where the collector block's lines landed, in pixels of the undamaged image (left, top, right, bottom), and
    the card's rectangle in the image."""

    line_boxes: tuple[tuple[int, int, int, int], ...]
    card_box: tuple[float, float, float, float]


def scan_size(height: int, bleed: bool) -> tuple[int, int]:
    """(width, height) of a portrait scan `height` pixels tall."""
    w, h = CARD_MM
    if bleed:
        w, h = w + 2 * BLEED_MM, h + 2 * BLEED_MM
    return round(height * w / h), height


def _colour(card: dict[str, Any]) -> str:
    cost = str(card.get("mana_cost", ""))
    found = [c for c in "WUBRG" if c in cost]
    return found[0] if len(found) == 1 else "M" if found else "C"


def _scaled(colour: RGB, factor: float) -> RGB:
    return tuple(max(0, min(255, round(c * factor))) for c in colour)  # type: ignore[return-value]


def _line_text(draw: ImageDraw.ImageDraw, xy: tuple[float, float], text: str, face: str, px: float, fill: RGB
               ) -> None:
    draw.text(xy, text, font=typeset.font(face, max(5, round(px))), fill=fill, anchor="ls")


def _paste_block(img: Image.Image, lines: list[str], face: str, cap: float, gap: float, tracking: float,
                 x: float, last_baseline: float, ink: RGB) -> list[tuple[int, int, int, int]]:
    """Set `lines` left-aligned at `x` with the last baseline at `last_baseline`; return each line's ink box."""
    mask, boxes = typeset.text_mask([(line, 0.0) for line in lines], face, cap, gap, tracking)
    first_baseline = last_baseline - gap * (len(lines) - 1)
    ox, oy = round(x - cap * 0.5), round(first_baseline - cap * 1.3)
    img.paste(ink, (ox, oy, ox + mask.width, oy + mask.height), mask)
    return [(b[0] + ox, b[1] + oy, b[2] + ox, b[3] + oy) for b in boxes]


def _right_line(img: Image.Image, text: str, face: str, cap: float, right: float, baseline: float, ink: RGB
                ) -> float:
    """Set `text` right-aligned at `right` on `baseline`; return its left edge."""
    width = typeset.line_width(text, face, cap)
    _paste_block(img, [text], face, cap, 0.0, 0.0, right - width, baseline, ink)
    return right - width


def render_card(card: dict[str, Any], printed: Printed, look: Look, height: int, bleed: bool, seed: int
                ) -> tuple[Image.Image, Drawn]:
    """The undamaged RGB scan of `card` printing `printed` in `look`, and where its collector lines are."""
    width, _ = scan_size(height, bleed)
    rng = random.Random(stable_digest("card", card["id"], seed, height, bleed))
    bleed_x = width * BLEED_MM / (CARD_MM[0] + 2 * BLEED_MM) if bleed else 0.0
    bleed_y = height * BLEED_MM / (CARD_MM[1] + 2 * BLEED_MM) if bleed else 0.0
    cw, ch = width - 2 * bleed_x, height - 2 * bleed_y
    bx = bleed_x + rng.uniform(-0.003, 0.003) * width  # the card a little off centre
    by = bleed_y + rng.uniform(-0.003, 0.003) * height

    def at(fx: float, fy: float) -> tuple[float, float]:
        return bx + fx * cw, by + fy * ch

    def rect(x0: float, y0: float, x1: float, y1: float) -> tuple[float, float, float, float]:
        return (*at(x0, y0), *at(x1, y1))

    borderless = card.get("border_color") == "borderless"
    border = _BORDER.get(str(card.get("border_color")), _BORDER["black"])
    if borderless:
        img = picture(card["name"], card["set"], (width, height))
        band = (0, round(at(0, 0.88)[1]), width, height)
        img.paste(Image.eval(img.crop(band), lambda v: v * 30 // 100), band[:2])
    else:
        img = Image.new("RGB", (width, height), border)
    draw = ImageDraw.Draw(img)
    frame = _FRAME[_colour(card)]
    b = look.border
    plate = _scaled(frame, 1.45) if _colour(card) != "W" else (238, 232, 214)
    edge = _scaled(frame, 0.55)
    line_w = max(1, round(ch * 0.003))
    if not borderless:
        draw.rectangle(rect(b, 0.028, 1 - b, 0.888), fill=frame)
        art_box = [round(v) for v in rect(b + 0.02, 0.108, 1 - b - 0.02, 0.552)]
        img.paste(picture(card["name"], card["set"], (art_box[2] - art_box[0], art_box[3] - art_box[1])),
                  art_box[:2])
        draw.rectangle(art_box, outline=edge, width=line_w)
        draw.rectangle(rect(b + 0.02, 0.62, 1 - b - 0.02, 0.872), fill=_scaled(plate, 1.06), outline=edge,
                       width=line_w)
    for y0, y1 in ((0.045, 0.098), (0.558, 0.611)):
        draw.rounded_rectangle(rect(b + 0.012, y0, 1 - b - 0.012, y1), radius=round(ch * 0.008), fill=plate,
                               outline=edge, width=line_w)
    dark = (18, 16, 14)
    name = str(card["name"]).split(" // ")[0]
    _line_text(draw, at(b + 0.03, 0.085), name, look.legal_face, ch * 0.03, dark)
    _line_text(draw, at(b + 0.03, 0.596), str(card.get("type_line", "")), look.legal_face, ch * 0.024, dark)
    side = round(ch * 0.036)
    sx, sy = (round(v) for v in at(0.885, 0.5845))
    img.paste(dark if card.get("rarity") != "rare" else (120, 90, 20),
              (sx - side // 2, sy - side // 2, sx - side // 2 + side, sy - side // 2 + side), symbol(card["set"], side))
    text_rng = random.Random(stable_digest("rules", card["name"]))
    for row in range(text_rng.randint(2, 5)):
        words = " ".join(text_rng.choice(_WORDS) for _ in range(text_rng.randint(4, 9)))
        _line_text(draw, at(b + 0.04, 0.66 + row * 0.036), words.capitalize() + ".", look.legal_face, ch * 0.021,
                   dark)
    if "Creature" in str(card.get("type_line", "")):
        draw.rounded_rectangle(rect(0.78, 0.85, 1 - b - 0.005, 0.893), radius=round(ch * 0.006), fill=plate,
                               outline=edge, width=line_w)
        _line_text(draw, at(0.81, 0.883), f"{text_rng.randint(0, 7)}/{text_rng.randint(1, 7)}", look.legal_face,
                   ch * 0.026, dark)
    if card.get("rarity") in ("rare", "mythic") and printed.prints_code:
        draw.ellipse(rect(0.47, 0.889, 0.53, 0.918), fill=(150, 150, 160), outline=(90, 90, 96))
    return img, _bottom_border(img, printed, look, at, ch, cw)


def _bottom_border(img: Image.Image, printed: Printed, look: Look, at: Any, ch: float, cw: float) -> Drawn:
    """Set the collector block at the left, the legal line (and the credit when the block lacks it) right-aligned
    at the right, shrunk until it clears the block."""
    cap, gap = look.cap * ch, look.gap * look.cap * ch
    x, last = at(look.left, look.bottom)
    lines = list(printed.lines)
    boxes = _paste_block(img, lines, look.face, cap, gap, look.tracking, x, last, look.ink)
    limit = max(box[2] for box in boxes) + 0.02 * cw
    right = at(1 - look.border - 0.012, 0)[0]

    def fitted(text: str, size: float) -> float:
        while right - typeset.line_width(text, look.legal_face, size) < limit and size > cap * 0.45:
            size *= 0.92
        return size

    legal_cap = fitted(printed.legal, cap * 0.85)
    _right_line(img, printed.legal, look.legal_face, legal_cap, right, last, look.ink)
    if not any("✎" in line or line.startswith("Illus.") for line in lines):
        credit = f"Illus. {printed.artist}"
        _right_line(img, credit, look.legal_face, fitted(credit, legal_cap), right, last - max(gap, legal_cap * 1.7),
                    look.ink)
    return Drawn(tuple(boxes), (at(0, 0)[0], at(0, 0)[1], cw, ch))
