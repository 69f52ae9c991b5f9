"""Renders a catalogue printing as a realistic proxy-card scan, every element inside its `layout` box.

Art is seeded by the card *name* only (reprints share it pixel for pixel; a card's `art_seed`, when set, draws custom
art instead), the set symbol by the set code, and
`seed` only varies incidental things (the info text tint). Text is drawn by `demo.text`.
"""

from __future__ import annotations

import hashlib
import io
import math
import random
from dataclasses import dataclass
from typing import Any

import numpy as np
from PIL import Image, ImageChops, ImageDraw, ImageFilter

from stage_e_dagster.demo import info as info_lines
from stage_e_dagster.demo.art import card_art
from stage_e_dagster.demo.catalog import set_printed_total
from stage_e_dagster.demo.info import COLLECTOR_TEXT_HEIGHT, InfoStyle
from stage_e_dagster.demo.symbols import symbol_mask
from stage_e_dagster.demo.text import DIGIT_HEIGHT, draw_text, fit_font, get_font, wrap
from stage_e_dagster.domain import layout
from stage_e_dagster.domain.printed_lines import MODERN, RARITY_FIRST

RGB = tuple[int, int, int]
__all__ = ["COLLECTOR_TEXT_HEIGHT", "Degradation", "InfoStyle", "collector_lines", "legal_text", "render_scan"]
_BORDERS: dict[str, RGB] = {
    "black": (17, 17, 19), "white": (241, 239, 233), "silver": (178, 180, 186), "gold": (203, 169, 84),
}
_FRAMES: dict[str, RGB] = {
    "W": (226, 219, 190), "U": (52, 104, 170), "B": (58, 52, 58), "R": (184, 66, 48), "G": (52, 120, 72),
    "M": (196, 164, 86), "C": (132, 134, 142),
}
_RARITY_INK: dict[str, RGB] = {  # dark enough to stand out on any plate, so the symbol hash survives damage
    "common": (14, 14, 16),
    "uncommon": (30, 42, 56),
    "rare": (86, 62, 8),
    "mythic": (118, 34, 6),
}
_ABILITIES = (
    "Flying", "Trample", "Vigilance", "Haste", "Deathtouch", "Lifelink", "First strike", "Reach",
    "When {n} enters the battlefield, draw a card.", "{T}: Add one mana of any color.",
    "Whenever {n} attacks, target creature gets -1/-1 until end of turn.",
    "Counter target spell unless its controller pays {3}.", "Destroy target artifact or enchantment.",
    "{n} deals 3 damage to any target.", "You gain 4 life. Scry 2.", "Return target creature card from "
    "your graveyard to your hand.", "Creatures you control get +1/+1 until end of turn.",
    "At the beginning of your upkeep, you may pay {1}. If you don't, sacrifice {n}.",
)


@dataclass(frozen=True)
class Degradation:
    """Scanner and upload damage applied after rendering: scale and rotate, blur, noise, then JPEG."""

    jpeg_quality: int | None = None
    blur_radius: float = 0.0
    noise_sigma: float = 0.0
    rotation_deg: float = 0.0
    scale: float = 1.0

    @classmethod
    def random(cls, rng: random.Random) -> Degradation:
        """Mild, realistic damage: JPEG 60-90, blur <= 1 px, noise sigma <= 6, rotation <= 1 deg, scale +-2%."""
        return cls(
            jpeg_quality=rng.randint(60, 90) if rng.random() < 0.85 else None,
            blur_radius=round(rng.uniform(0.0, 1.0), 2),
            noise_sigma=round(rng.uniform(0.0, 6.0), 2),
            rotation_deg=round(rng.uniform(-1.0, 1.0), 2),
            scale=round(rng.uniform(0.98, 1.02), 3),
        )

    def apply(self, img: Image.Image, seed: int = 0, fill: RGB = (246, 245, 241)) -> Image.Image:
        """`img` with this damage applied, same size; uncovered corners get the scanner-bed `fill`."""
        out = img.convert("RGB")
        w, h = out.size
        if self.rotation_deg or self.scale != 1.0:
            angle = math.radians(self.rotation_deg)
            cos, sin = math.cos(angle) / self.scale, math.sin(angle) / self.scale
            cx, cy = w / 2, h / 2  # inverse map: output pixel -> source pixel, about the centre
            matrix = (cos, sin, cx - cos * cx - sin * cy, -sin, cos, cy + sin * cx - cos * cy)
            out = out.transform((w, h), Image.Transform.AFFINE, matrix, Image.Resampling.BILINEAR, fillcolor=fill)
        if self.blur_radius > 0:
            out = out.filter(ImageFilter.GaussianBlur(self.blur_radius))
        if self.noise_sigma > 0:
            noise = np.random.default_rng(seed).standard_normal((h, w), dtype=np.float32)
            grain = Image.fromarray(np.clip(noise * self.noise_sigma + 128.0, 0, 255).astype(np.uint8), "L")
            out = ImageChops.add(out, Image.merge("RGB", (grain, grain, grain)), 1.0, -128)
        if self.jpeg_quality is not None:
            buffer = io.BytesIO()
            out.save(buffer, "JPEG", quality=self.jpeg_quality)
            buffer.seek(0)
            out = Image.open(buffer).convert("RGB")
        return out


def scan_size(long_side: int, bleed: bool) -> tuple[int, int]:
    """(width, height) of a portrait scan with this long side and bleed class."""
    aspect = layout.BLEED_ASPECT if bleed else layout.TRIM_ASPECT
    return round(long_side * aspect), long_side


def _digest(*parts: object) -> int:
    return int.from_bytes(hashlib.sha256("|".join(map(str, parts)).encode()).digest()[:8], "big")


def _art_seed(card: dict[str, Any]) -> str:
    """What the art is drawn from: the card's name (reprints share their art), or its own `art_seed` (custom art)."""
    return str(card.get("art_seed") or card["name"])


def front_name(card: dict[str, Any]) -> str:
    """The name printed on the card's front (the first face of a double-faced card)."""
    faces = card.get("card_faces")
    if faces:
        return str(faces[0]["name"])
    return str(card["name"]).split(" // ")[0]


def collector_lines(card: dict[str, Any], style: InfoStyle = InfoStyle()) -> tuple[str, str | None]:
    """The collector block as printed at the bottom left: ("123/280 R", "M20 • EN ✎ artist") on modern frames,
    ("", None) on the layouts that print their number on the legal line (`info.legal_lines`)."""
    return info_lines.collector_lines(card, set_printed_total(card["set"]), style)


def legal_marker(card: dict[str, Any]) -> str | None:
    """"PROXY" or "NOT FOR SALE" for a few printings (fixed per card id), else None."""
    roll = _digest("marker", card["id"]) % 100
    return "PROXY" if roll < 6 else "NOT FOR SALE" if roll < 10 else None


def legal_text(card: dict[str, Any]) -> str | None:
    """The legal line as its layout prints it ("™ & © 2019 Wizards of the Coast"; on the 2003 frame it ends in the
    collector number), "<marker> © <year> Wizards" for a proxy; None for a card printed before copyright years."""
    return info_lines.legal_lines(card, set_printed_total(card["set"]), legal_marker(card))[1]


def _identity(card: dict[str, Any]) -> str:
    cost = card.get("mana_cost") or (card.get("card_faces") or [{}])[0].get("mana_cost", "")
    colours = sorted({c for c in "WUBRG" if f"{{{c}}}" in cost})
    return colours[0] if len(colours) == 1 else "M" if colours else "C"


def _shade(colour: RGB, factor: float) -> RGB:
    if factor >= 1:
        return tuple(round(c + (255 - c) * (factor - 1)) for c in colour)  # type: ignore[return-value]
    return tuple(round(c * factor) for c in colour)  # type: ignore[return-value]


def _rules(card: dict[str, Any]) -> list[str]:
    rng = random.Random(_digest("rules", card["name"]))
    name = front_name(card)
    return [a.replace("{n}", name) for a in rng.sample(_ABILITIES, rng.randint(1, 3))]


def _mana(draw: ImageDraw.ImageDraw, cost: str, right: float, mid_y: float, size: float) -> None:
    symbols = [s for s in cost.replace("}", "").split("{") if s][::-1]
    small = get_font(int(size * 0.85))
    for k, sym in enumerate(symbols):
        cx = right - size * (0.5 + 1.08 * k)
        fill = _shade(_FRAMES.get(sym, (200, 196, 190)), 1.15 if sym in _FRAMES else 1.0)
        draw.ellipse((cx - size / 2, mid_y - size / 2, cx + size / 2, mid_y + size / 2), fill=fill,
                     outline=(20, 20, 20), width=max(1, round(size * 0.06)))
        if sym not in "WUBRG":
            draw.text((cx, mid_y), sym, font=small, fill=(20, 20, 20), anchor="mm")


def render_scan(
    card: dict[str, Any],
    *,
    long_side: int = 1040,
    bleed: bool = False,
    seed: int = 0,
    degradation: Degradation | None = None,
    style: InfoStyle = InfoStyle(),
) -> Image.Image:
    """An RGB scan of `card` (a catalogue card object), `long_side` tall, with or without bleed; `style` sets how
    the collector, artist and legal lines are drawn (the demo's own look by default)."""
    width, height = scan_size(long_side, bleed)
    trim = layout.trim_rect(width, height, bleed)
    rng = random.Random(_digest("scan", card["id"], seed, long_side, bleed))
    border_name = str(card.get("border_color", "black"))
    borderless = border_name == "borderless"
    border = _BORDERS.get(border_name, _BORDERS["black"])
    frame_style = str(card.get("frame", "2015"))
    rounded = frame_style == "2015"
    th = trim.height

    def box(b: layout.Box) -> tuple[int, int, int, int]:
        return trim.crop_box(b)

    frame = _FRAMES[_identity(card)]
    # Plates contrast with the frame either strongly or hardly at all: a middling step fragments under scan
    # noise into specks that a symbol-hash trim mistakes for glyph.
    plate = _shade(frame, 1.4 if _identity(card) == "W" else 1.7)
    ink = (16, 16, 16)
    if borderless:
        img = card_art(_art_seed(card), (width, height), bleed, full=True)
    else:
        img = Image.new("RGB", (width, height), border)
    draw = ImageDraw.Draw(img)
    radius = round(th * 0.012) if rounded else 0
    stroke = max(2, round(th * 0.0035))  # thick enough to stay one connected line through scan damage
    kind = info_lines.layout_of_card(card)
    frame_bottom = info_lines.FRAME_BOTTOM[kind]
    if not borderless:
        draw.rounded_rectangle(box((0.042, 0.03, 0.958, frame_bottom)), radius=round(th * 0.02), fill=frame)
        outer = box((layout.ART_BOX[0] - 0.006, layout.ART_BOX[1] - 0.004, layout.ART_BOX[2] + 0.006,
                     layout.ART_BOX[3] + 0.004))
        draw.rectangle(outer, fill=_shade(frame, 0.55))
        art_box = box(layout.ART_BOX)
        art = card_art(_art_seed(card), (art_box[2] - art_box[0], art_box[3] - art_box[1]), bleed=False,
                       full=False)
        img.paste(art, art_box[:2])
    else:  # darken the bottom so the collector text stays readable over the art
        band = (0, box((0, frame_bottom, 1, 1))[1], width, height)
        img.paste(Image.blend(img.crop(band), Image.new("RGB", (band[2] - band[0], band[3] - band[1])), 0.7),
                  band[:2])
    # Name plate with mana cost.
    name_box = box((0.06, 0.042, 0.94, 0.102))
    draw.rounded_rectangle(name_box, radius=radius, fill=plate, outline=_shade(frame, 0.5), width=stroke)
    mid_y = (name_box[1] + name_box[3]) / 2
    text_x = name_box[0] + th * 0.014
    if card.get("layout") == "transform":
        r = th * 0.013
        draw.ellipse((text_x, mid_y - r, text_x + 2 * r, mid_y + r), fill=ink)
        draw.pieslice((text_x, mid_y - r, text_x + 2 * r, mid_y + r), 90, 270, fill=plate)
        text_x += 2.6 * r
    cost = card.get("mana_cost") or (card.get("card_faces") or [{}])[0].get("mana_cost", "")
    mana_width = th * 0.034 * 1.08 * cost.count("{") + th * 0.02
    name_font = fit_font(front_name(card), th * 0.03, name_box[2] - mana_width - text_x)
    draw_text(draw, text_x, mid_y + name_font.size * DIGIT_HEIGHT / 2, front_name(card), name_font, ink)
    _mana(draw, cost, name_box[2] - th * 0.01, mid_y, th * 0.034)
    # Type line with the set symbol inside SET_SYMBOL.
    type_box = box(layout.TYPE_LINE)
    draw.rounded_rectangle(type_box, radius=radius, fill=plate)
    type_font = fit_font(str(card.get("type_line", "Creature")), th * 0.022,
                          box((0.08, 0, 0.80, 1))[2] - box((0.08, 0, 0.80, 1))[0])
    type_mid = (type_box[1] + type_box[3]) / 2
    draw_text(draw, type_box[0] + th * 0.014, type_mid + th * 0.011, str(card.get("type_line", "Creature")),
              type_font, ink)
    sym_box = box(layout.SET_SYMBOL)
    side = round(min(sym_box[2] - sym_box[0], sym_box[3] - sym_box[1]) * 0.86)
    mask = symbol_mask(str(card["set"]), side)
    sx = (sym_box[0] + sym_box[2] - side) // 2
    sy = (sym_box[1] + sym_box[3] - side) // 2
    img.paste(_RARITY_INK.get(str(card.get("rarity")), _RARITY_INK["common"]), (sx, sy, sx + side, sy + side), mask)
    # Text box with rules text (and a power/toughness plate for creatures).
    text_box = box(layout.TEXT_BOX)
    draw.rectangle(text_box, fill=_shade(plate, 1.12), outline=_shade(frame, 0.5), width=stroke)
    rules_font = get_font(int(th * 0.019 / DIGIT_HEIGHT))
    pad = th * 0.014
    y = text_box[1] + pad + th * 0.019
    for paragraph in _rules(card):
        for line in wrap(paragraph, rules_font, text_box[2] - text_box[0] - 2 * pad):
            if y > text_box[3] - th * 0.05:
                break
            draw_text(draw, text_box[0] + pad, y, line, rules_font, ink)
            y += th * 0.029
        y += th * 0.008
    if "Creature" in str(card.get("type_line", "")):  # the P/T box straddles the frame's bottom edge
        pt = box((0.79, frame_bottom - 0.036, 0.925, frame_bottom + 0.004))
        draw.rounded_rectangle(pt, radius=radius, fill=plate, outline=_shade(frame, 0.5), width=stroke)
        power = random.Random(_digest("pt", card["name"]))
        draw_text(draw, pt[0] + th * 0.016, pt[3] - th * 0.008, f"{power.randint(1, 6)}/{power.randint(1, 6)}",
                  get_font(int(th * 0.02 / DIGIT_HEIGHT)), ink)
    if kind in (MODERN, RARITY_FIRST) and card.get("rarity") in ("rare", "mythic") and not borderless:
        oval = box((0.465, 0.946, 0.535, 0.978))  # the holofoil stamp
        draw.ellipse(oval, fill=(168, 170, 178), outline=(96, 98, 106), width=max(1, round(th * 0.002)))
    # Collector block, illustrator and legal line, on the border.
    if borderless or border_name == "black":
        info: RGB = (245, 245, 245) if rng.random() < 0.6 else (228, 222, 200)
    else:
        info = (10, 10, 12) if rng.random() < 0.6 else (30, 24, 20)
    info_lines.draw_info_lines(draw, trim, card, set_printed_total(card["set"]), legal_marker(card), info, style)
    if degradation is not None:
        img = degradation.apply(img, seed=_digest("noise", card["id"], seed))
    return img
