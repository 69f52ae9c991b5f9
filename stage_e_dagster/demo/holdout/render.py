"""Draws a held-out card scan: its frame by era, plates, art, symbol, P/T, holofoil stamp and bottom-border type.

Frame shapes (fractions of the trimmed card's height), after real cards of each frame:

- 1993 and 1997: art 0.10-0.50, type line 0.508-0.548, text box 0.556-0.892, the coloured frame ending at 0.90;
  the power and toughness printed as plain figures in the bottom border at the right, level with the credit.
- 2003: art 0.105-0.553, type bar 0.56-0.604, text box 0.612-0.905, frame ending at 0.918; the P/T box at
  0.765-0.935 of the width, 0.878-0.928 of the height, over the text box's corner and above the border's lines.
- 2015: art 0.11-0.555, type bar 0.562-0.606, text box 0.614-0.905, frame ending at 0.912; the P/T box at
  0.80-0.945 x 0.868-0.918; rares and mythics carry a holofoil oval at the bottom centre (0.463-0.537 x
  0.906-0.938), between the collector block and the legal line.

Borderless printings put the art under the whole card (the bottom band darkened by 25-65%) and print their lines
in white over it; extended-art printings widen the art to the border; showcase printings gild the frame. White-
bordered cards print dark ink. Bleed scans carry 3 mm of bleed; the card may sit a little off centre.
`border.draw_border` sets the bottom border's text.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from PIL import Image, ImageDraw

from stage_e_dagster.demo.holdout import type as typeset
from stage_e_dagster.demo.holdout.art import picture, symbol
from stage_e_dagster.demo.holdout.border import Drawn, Look, draw_border
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
class FrameShape:
    """One frame's geometry (fractions of the card's height; the P/T box's x in fractions of the width), and the
    range of its side border's width."""

    art: tuple[float, float]
    type_bar: tuple[float, float]
    text: tuple[float, float]
    bottom: float
    pt_box: tuple[float, float, float, float] | None
    border: tuple[float, float]


_OLD = FrameShape(art=(0.10, 0.50), type_bar=(0.508, 0.548), text=(0.556, 0.892), bottom=0.90, pt_box=None,
                  border=(0.045, 0.06))
FRAMES: dict[str, FrameShape] = {
    "1993": _OLD,
    "1997": _OLD,
    "2003": FrameShape(art=(0.105, 0.553), type_bar=(0.56, 0.604), text=(0.612, 0.905), bottom=0.918,
                       pt_box=(0.765, 0.878, 0.935, 0.928), border=(0.04, 0.05)),
    "2015": FrameShape(art=(0.11, 0.555), type_bar=(0.562, 0.606), text=(0.614, 0.905), bottom=0.912,
                       pt_box=(0.80, 0.868, 0.945, 0.918), border=(0.038, 0.05)),
}
HOLOFOIL = (0.463, 0.906, 0.537, 0.938)


def frame_shape(card: dict[str, Any]) -> FrameShape:
    """The geometry of `card`'s frame."""
    return FRAMES.get(str(card.get("frame")), FRAMES["2015"])


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


def _mixed(colour: RGB, other: RGB, share: float) -> RGB:
    return tuple(round(a * (1 - share) + b * share) for a, b in zip(colour, other, strict=True))  # type: ignore


def _text(draw: ImageDraw.ImageDraw, xy: tuple[float, float], text: str, face: str, px: float, fill: RGB) -> None:
    draw.text(xy, text, font=typeset.font(face, max(5, round(px))), fill=fill, anchor="ls")


def render_card(card: dict[str, Any], printed: Printed, look: Look, height: int, bleed: bool, seed: int
                ) -> tuple[Image.Image, Drawn]:
    """The undamaged RGB scan of `card` printing `printed` in `look`, and where its bottom-border text is."""
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

    shape = frame_shape(card)
    effects = set(card.get("frame_effects") or ())
    borderless = card.get("border_color") == "borderless"
    if borderless:
        img = picture(card["name"], card["set"], (width, height))
        band = (0, round(at(0, shape.bottom - 0.01)[1]), width, height)
        keep = rng.randint(35, 75)
        img.paste(Image.eval(img.crop(band), lambda v: v * keep // 100), band[:2])
    else:
        img = Image.new("RGB", (width, height), _BORDER.get(str(card.get("border_color")), _BORDER["black"]))
    draw = ImageDraw.Draw(img)
    colour = _colour(card)
    frame = _FRAME[colour] if "showcase" not in effects else _mixed(_FRAME[colour], (196, 160, 72), 0.55)
    b = look.border
    plate = _scaled(frame, 1.45) if colour != "W" else (238, 232, 214)
    edge = _scaled(frame, 0.55)
    line_w = max(1, round(ch * 0.003))
    inset = 0.0 if "extendedart" in effects else 0.02
    if not borderless:
        draw.rectangle(rect(b, 0.028, 1 - b, shape.bottom), fill=frame)
        top = 0.028 if "extendedart" in effects else shape.art[0]
        art_box = [round(v) for v in rect(b + inset, top, 1 - b - inset, shape.art[1])]
        img.paste(picture(card["name"], card["set"], (art_box[2] - art_box[0], art_box[3] - art_box[1])),
                  art_box[:2])
        draw.rectangle(art_box, outline=edge, width=line_w)
        if "showcase" in effects:
            draw.rectangle(rect(b + 0.008, 0.034, 1 - b - 0.008, shape.bottom - 0.006), outline=edge, width=line_w)
    draw.rectangle(rect(b + 0.02, shape.text[0], 1 - b - 0.02, shape.text[1]), fill=_scaled(plate, 1.06),
                   outline=edge, width=line_w)
    bars = ((0.04, 0.093), shape.type_bar)
    for y0, y1 in bars:
        draw.rounded_rectangle(rect(b + 0.012, y0, 1 - b - 0.012, y1), radius=round(ch * 0.008), fill=plate,
                               outline=edge, width=line_w)
    dark = (18, 16, 14)
    _text(draw, at(b + 0.03, 0.08), str(card["name"]).split(" // ")[0], look.legal_face, ch * 0.03, dark)
    _text(draw, at(b + 0.03, shape.type_bar[1] - 0.012), str(card.get("type_line", "")), look.legal_face,
          ch * 0.024, dark)
    side = round(ch * 0.034)
    sx, sy = (round(v) for v in at(1 - b - 0.06, sum(shape.type_bar) / 2))
    img.paste(dark if card.get("rarity") not in ("rare", "mythic") else (120, 90, 20),
              (sx - side // 2, sy - side // 2, sx - side // 2 + side, sy - side // 2 + side), symbol(card["set"], side))
    text_rng = random.Random(stable_digest("rules", card["name"]))
    for row in range(text_rng.randint(2, 5)):
        words = " ".join(text_rng.choice(_WORDS) for _ in range(text_rng.randint(4, 9)))
        _text(draw, at(b + 0.04, shape.text[0] + 0.045 + row * 0.036), words.capitalize() + ".", look.legal_face,
              ch * 0.021, dark)
    marks: list[tuple[str, tuple[int, int, int, int]]] = []
    if "Creature" in str(card.get("type_line", "")):
        pt = f"{text_rng.randint(0, 7)}/{text_rng.randint(1, 7)}"
        if shape.pt_box is None:  # the old frames print the figures in the border, level with the credit
            right, base = at(1 - b - 0.03, 0.94)
            width_px = draw.textlength(pt, font=typeset.font(look.face, max(5, round(ch * 0.022))))
            _text(draw, (right - width_px, base), pt, look.face, ch * 0.022, look.ink)
            marks.append(("pt", (round(right - width_px), round(base - ch * 0.016), round(right), round(base))))
        else:
            box = [round(v) for v in rect(*shape.pt_box)]
            draw.rounded_rectangle(box, radius=round(ch * 0.006), fill=plate, outline=edge, width=line_w)
            _text(draw, at(shape.pt_box[0] + 0.035, shape.pt_box[3] - 0.014), pt, look.legal_face, ch * 0.026, dark)
            marks.append(("pt", (box[0], box[1], box[2], box[3])))
    if card.get("rarity") in ("rare", "mythic") and card.get("frame") == "2015":
        oval = [round(v) for v in rect(*HOLOFOIL)]
        draw.ellipse(oval, fill=(168, 168, 176), outline=(96, 96, 104), width=max(1, line_w // 2))
        draw.ellipse([oval[0] + (oval[2] - oval[0]) // 4, oval[1] + (oval[3] - oval[1]) // 4,
                      oval[2] - (oval[2] - oval[0]) // 4, oval[3] - (oval[3] - oval[1]) // 4], fill=(196, 192, 206))
        marks.append(("holofoil", (oval[0], oval[1], oval[2], oval[3])))
    boxes, number_box, more = draw_border(img, printed, look, at, cw, ch)
    return img, Drawn(tuple(boxes), number_box, tuple(marks + more), (at(0, 0)[0], at(0, 0)[1], cw, ch))
