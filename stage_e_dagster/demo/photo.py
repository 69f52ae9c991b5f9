"""Drawn phone photos of printed cards: a rendered card laid on a surface, seen at an angle, with light and blur.

`plan_photo` draws a photo's parameters from a seed; `draw_photo` places an already rendered card image (any
renderer's output, with or without bleed: a printed card is cut to its trim) on a surface (`photo_scene`), in a
sleeve or top-loader sometimes, turned any way, tilted up to 15 degrees, with a shadow, a glare band, uneven light,
mild motion blur and sensor grain, at phone sizes. The photo records its truth: the card's corners as the card
reads (top-left, top-right, bottom-right, bottom-left; normalised to the photo, so a cut-off card's may fall
outside 0..1) and what a card finder must answer: `found`, or the skip reason of a photo that must skip.
"""

from __future__ import annotations

import io
import math
import random
from dataclasses import dataclass

import cv2
import numpy as np
from PIL import Image

from stage_e_dagster.demo import photo_scene as scene
from stage_e_dagster.domain import layout
from stage_e_dagster.domain.evidence.geometry import classify_bleed

FOUND = "found"
EXPECTED = {"single": FOUND, "several": "photo-several-cards", "cut-off": "photo-card-cut-off",
            "too-small": "photo-card-too-small"}
CASES = tuple(EXPECTED)
HOLDERS = (None, "sleeve", "toploader")
# Holder margins beyond the card, in mm on each side (a standard sleeve; a 3x4 inch top-loader).
_HOLDER_MM = {"sleeve": (1.5, 1.5), "toploader": (6.6, 6.8)}
_CORNER_RADIUS = 0.048  # of the card's width: 3 mm on 63


Corners = tuple[tuple[float, float], tuple[float, float], tuple[float, float], tuple[float, float]]


@dataclass(frozen=True)
class PhotoPlan:
    """How one photo is drawn; every field comes from `plan_photo(seed, ...)`."""

    seed: int
    case: str  # one of CASES
    background: str
    holder: str | None
    size: tuple[int, int]  # (w, h) in pixels
    card_fraction: float  # the card's area over the photo's (each card's, for several)
    rotation_deg: float  # where the card's top points, clockwise from the photo's up
    tilt_deg: float
    tilt_axis_deg: float
    shadow: float
    glare: float
    light: float
    blur_px: int
    thumb: bool
    cards: int  # how many cards are in the photo
    cut: float  # the share of the card's area outside the frame (cut-off only)
    cut_side: int  # the side pushed out: 0 top, 1 right, 2 bottom, 3 left, as the card reads
    jpeg_quality: int

    @property
    def expected(self) -> str:
        return EXPECTED[self.case]


@dataclass(frozen=True)
class DrawnPhoto:
    """A drawn photo (RGB) and its truth."""

    image: Image.Image
    corners: Corners  # the (first) card's corners as it reads, normalised to the photo
    all_corners: tuple[Corners, ...]
    plan: PhotoPlan

    @property
    def expected(self) -> str:
        return self.plan.expected

    def jpeg(self) -> bytes:
        """The photo as a phone saves it."""
        buffer = io.BytesIO()
        self.image.save(buffer, "JPEG", quality=self.plan.jpeg_quality)
        return buffer.getvalue()


def _rotation(rng: random.Random) -> float:
    """Mostly near one of the four ways up, sometimes anywhere."""
    if rng.random() < 0.15:
        return rng.uniform(0, 360)
    base = rng.choices((0, 90, 180, 270), weights=(45, 18, 19, 18))[0]
    return (base + rng.uniform(-25, 25)) % 360


def plan_photo(seed: int, case: str = "single", long_side: int | None = None) -> PhotoPlan:
    """A photo's parameters drawn from `seed`; `long_side` overrides the phone size (3000-4000 px)."""
    if case not in EXPECTED:
        raise ValueError(f"unknown case {case!r}; known: {', '.join(CASES)}")
    rng = random.Random(f"photo:{seed}:{case}")
    side = long_side or rng.randint(3000, 4000)
    ratio = rng.choices((4 / 3, 16 / 9, 1.0), weights=(70, 20, 10))[0]
    size = (side, round(side / ratio)) if rng.random() < 0.5 else (round(side / ratio), side)
    cards = rng.choices((2, 3), weights=(80, 20))[0] if case == "several" else 1
    fraction = {"single": math.exp(rng.uniform(math.log(0.13), math.log(0.55))), "cut-off": rng.uniform(0.2, 0.45),
                "too-small": rng.uniform(0.025, 0.075), "several": rng.uniform(0.1, 0.2 if cards == 2 else 0.13)}[case]
    holder = rng.choices(HOLDERS, weights=(60, 27, 13))[0] if case != "several" else rng.choice((None, "sleeve"))
    return PhotoPlan(
        seed=seed, case=case, background=rng.choice(scene.BACKGROUNDS), holder=holder, size=size,
        card_fraction=round(fraction, 4), rotation_deg=round(_rotation(rng), 2), tilt_deg=round(rng.uniform(0, 15), 2),
        tilt_axis_deg=round(rng.uniform(0, 180), 1), shadow=round(rng.uniform(0.0, 0.55), 2),
        glare=round(rng.uniform(0.25, 0.85), 2) if rng.random() < 0.6 else 0.0,
        light=round(rng.uniform(0.0, 0.6), 2), blur_px=rng.choice((0, 0, 0, 2, 3, 4, 6)),
        thumb=rng.random() < 0.5, cards=cards, cut=round(rng.uniform(0.07, 0.3), 3),
        cut_side=2 if rng.random() < 0.7 else rng.choice((0, 1, 3)), jpeg_quality=rng.randint(72, 93),
    )


def plan_photos(count: int, seed: int = 0, must_skip: int = 0, long_side: int | None = None) -> list[PhotoPlan]:
    """`count` single-card photos, then `must_skip` of each case that must skip."""
    plans = [plan_photo(seed * 100_000 + i, "single", long_side) for i in range(count)]
    for case in ("several", "cut-off", "too-small"):
        plans += [plan_photo(seed * 100_000 + 50_000 + i, case, long_side) for i in range(must_skip)]
    return plans


def card_face(card: Image.Image) -> Image.Image:
    """The printed card: a scan with bleed cut to its trim; a portrait RGB image."""
    rgb = card.convert("RGB")
    if rgb.width > rgb.height:
        raise ValueError(f"a card image is portrait; got {rgb.width}x{rgb.height}")
    if classify_bleed(rgb.width, rgb.height).bleed_class == "bleed":
        trim = layout.trim_rect(rgb.width, rgb.height, True)
        rgb = rgb.crop(trim.crop_box((0.0, 0.0, 1.0, 1.0)))
    return rgb


def _projected(w: float, h: float, rotation_deg: float, tilt_deg: float, axis_deg: float) -> np.ndarray:
    """The card's corners (TL, TR, BR, BL) turned in the plane, tilted in depth and seen by a pinhole camera."""
    pts = np.array([[-w / 2, -h / 2, 0], [w / 2, -h / 2, 0], [w / 2, h / 2, 0], [-w / 2, h / 2, 0]], np.float64)
    rot = math.radians(rotation_deg)
    rz = np.array([[math.cos(rot), -math.sin(rot), 0], [math.sin(rot), math.cos(rot), 0], [0, 0, 1]])
    axis = np.array([math.cos(math.radians(axis_deg)), math.sin(math.radians(axis_deg)), 0.0])
    tilt, _ = cv2.Rodrigues(axis * math.radians(tilt_deg))
    pts = pts @ rz.T @ tilt.T
    distance = 2.2 * max(w, h)
    z = pts[:, 2] + distance
    return np.stack([pts[:, 0] * distance / z, pts[:, 1] * distance / z], axis=1)


def _area(quad: np.ndarray) -> float:
    return float(abs(cv2.contourArea(quad.astype(np.float32))))


def _inside_share(quad: np.ndarray, size: tuple[int, int]) -> float:
    frame = np.array([[0, 0], [size[0], 0], [size[0], size[1]], [0, size[1]]], np.float32)
    inter, _ = cv2.intersectConvexConvex(quad.astype(np.float32), frame)
    return inter / max(_area(quad), 1e-9)


def _place(plan: PhotoPlan, rng: random.Random, taken: list[np.ndarray]) -> np.ndarray:
    """The card's quad in photo pixels, placed as the plan's case needs."""
    w, h = plan.size
    card_h = math.sqrt(plan.card_fraction * w * h / layout.TRIM_ASPECT)
    rotation = plan.rotation_deg if not taken else rng.uniform(0, 360)
    quad = _projected(card_h * layout.TRIM_ASPECT, card_h, rotation, plan.tilt_deg, plan.tilt_axis_deg)
    quad *= math.sqrt(plan.card_fraction * w * h / _area(quad))
    margin = 0.02 * min(w, h)
    for _ in range(200):
        lo, hi = quad.min(axis=0), quad.max(axis=0)
        if (hi - lo)[0] < w - 2 * margin and (hi - lo)[1] < h - 2 * margin:
            break
        quad *= 0.97
    for attempt in range(4000):  # another card's place is taken: try elsewhere, a little smaller now and then
        if attempt and attempt % 40 == 0:
            quad *= 0.95
        lo, hi = quad.min(axis=0), quad.max(axis=0)
        placed = quad + np.array([rng.uniform(margin - lo[0], w - margin - hi[0]),
                                  rng.uniform(margin - lo[1], h - margin - hi[1])])
        if all(_apart(placed, other, margin) for other in taken):
            break
    if plan.case == "cut-off":
        placed = _push_out(quad + np.array([w / 2, h / 2]) - quad.mean(axis=0), plan, w, h)
    return placed


def _apart(a: np.ndarray, b: np.ndarray, gap: float) -> bool:
    (alo, ahi), (blo, bhi) = (a.min(axis=0), a.max(axis=0)), (b.min(axis=0), b.max(axis=0))
    return bool(alo[0] > bhi[0] + gap or blo[0] > ahi[0] + gap or alo[1] > bhi[1] + gap or blo[1] > ahi[1] + gap)


def _push_out(quad: np.ndarray, plan: PhotoPlan, w: int, h: int) -> np.ndarray:
    """Moves the card away from the centre through its `cut_side` until `cut` of its area is outside the frame."""
    side = plan.cut_side
    midpoint = (quad[side] + quad[(side + 1) % 4]) / 2
    direction = midpoint - quad.mean(axis=0)
    direction /= np.linalg.norm(direction)
    step = 0.004 * max(w, h)
    for _ in range(2000):
        if 1.0 - _inside_share(quad, (w, h)) >= plan.cut:
            break
        quad = quad + direction * step
    return quad


def _rounded_mask(w: int, h: int, radius: float) -> np.ndarray:
    mask = np.zeros((h, w), np.uint8)
    r = max(1, round(radius))
    cv2.rectangle(mask, (r, 0), (w - 1 - r, h - 1), 255, -1)
    cv2.rectangle(mask, (0, r), (w - 1, h - 1 - r), 255, -1)
    for cx, cy in ((r, r), (w - 1 - r, r), (r, h - 1 - r), (w - 1 - r, h - 1 - r)):
        cv2.circle(mask, (cx, cy), r, 255, -1, cv2.LINE_AA)
    return mask


def _sheet(face: np.ndarray, holder: str | None, rng: random.Random) -> tuple[np.ndarray, float, float]:
    """The card (and its holder) as an RGBA sheet, with the card's offset (mx, my) inside it."""
    ch, cw = face.shape[:2]
    mx, my = ((_HOLDER_MM[holder][0] / layout.TRIM_MM[0] * cw, _HOLDER_MM[holder][1] / layout.TRIM_MM[1] * ch)
              if holder else (0.0, 0.0))
    sw, sh = round(cw + 2 * mx), round(ch + 2 * my)
    sheet = np.zeros((sh, sw, 4), np.uint8)
    if holder:
        tint = rng.uniform(0.12, 0.3) if holder == "sleeve" else rng.uniform(0.2, 0.35)
        sheet[..., :3] = rng.randint(215, 245)
        sheet[..., 3] = _rounded_mask(sw, sh, 0.015 * sw) * tint
        edge = max(2, round((0.25 if holder == "sleeve" else 1.4) / layout.TRIM_MM[0] * cw))
        inner = _rounded_mask(sw - 2 * edge, sh - 2 * edge, 0.015 * sw)
        ring = _rounded_mask(sw, sh, 0.015 * sw).astype(np.float32) / 255
        ring[edge:sh - edge, edge:sw - edge] -= inner.astype(np.float32) / 255
        sheet[..., 3] = np.maximum(sheet[..., 3], (np.clip(ring, 0, 1) * rng.uniform(120, 200)).astype(np.uint8))
    ox, oy = round(mx), round(my)
    haze = 0.06 if holder else 0.0
    sheet[oy:oy + ch, ox:ox + cw, :3] = (face * (1 - haze) + 255 * haze).astype(np.uint8)
    card_alpha = _rounded_mask(cw, ch, _CORNER_RADIUS * cw)
    sheet[oy:oy + ch, ox:ox + cw, 3] = np.maximum(sheet[oy:oy + ch, ox:ox + cw, 3], card_alpha)
    return sheet, float(ox), float(oy)


def _composite(canvas: np.ndarray, face: np.ndarray, quad: np.ndarray, plan: PhotoPlan, rng: random.Random,
               nprng: np.random.Generator) -> None:
    """Lays one card (with its holder, shadow and glare) on `canvas` in place."""
    h_img, w_img = canvas.shape[:2]
    shown = max(np.linalg.norm(quad[3] - quad[0]), np.linalg.norm(quad[2] - quad[1]))
    if face.shape[0] > 1.2 * shown:  # shrink first: a perspective warp does not average when it shrinks
        face = cv2.resize(face, (max(8, round(shown * face.shape[1] / face.shape[0])), round(shown)),
                          interpolation=cv2.INTER_AREA)
    ch, cw = face.shape[:2]
    sheet, ox, oy = _sheet(face, plan.holder, rng)
    card_to_photo = cv2.getPerspectiveTransform(
        np.array([[0, 0], [cw, 0], [cw, ch], [0, ch]], np.float32), quad.astype(np.float32))
    sheet_to_photo = card_to_photo @ np.array([[1, 0, -ox], [0, 1, -oy], [0, 0, 1]])
    sh, sw = sheet.shape[:2]
    outline = cv2.perspectiveTransform(np.array([[[0, 0], [sw, 0], [sw, sh], [0, sh]]], np.float64), sheet_to_photo)[0]
    pad = 0.08 * shown
    x0, y0 = (max(0, int(v)) for v in outline.min(axis=0) - pad)
    x1, y1 = min(w_img, int(outline[:, 0].max() + pad)), min(h_img, int(outline[:, 1].max() + pad))
    if x1 <= x0 or y1 <= y0:
        return
    local = np.array([[1, 0, -x0], [0, 1, -y0], [0, 0, 1]]) @ sheet_to_photo
    warped = cv2.warpPerspective(sheet, local, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR,
                                 borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0, 0))
    alpha = warped[..., 3].astype(np.float32) / 255
    region = canvas[y0:y1, x0:x1].astype(np.float32)
    if plan.shadow > 0:
        small = cv2.resize(alpha, None, fx=0.25, fy=0.25, interpolation=cv2.INTER_AREA)
        shift = np.float32([[1, 0, rng.uniform(-0.03, 0.03) * shown / 4], [0, 1, rng.uniform(0.0, 0.04) * shown / 4]])
        small = cv2.warpAffine(small, shift, (small.shape[1], small.shape[0]))
        small = cv2.GaussianBlur(small, (0, 0), max(1.0, 0.025 * shown / 4))
        shade = cv2.resize(small, (x1 - x0, y1 - y0), interpolation=cv2.INTER_LINEAR)
        region *= (1.0 - plan.shadow * shade)[..., None]
    region = region * (1 - alpha[..., None]) + warped[..., :3].astype(np.float32) * alpha[..., None]
    if plan.glare > 0:
        gh, gw = max(2, (y1 - y0) // 4), max(2, (x1 - x0) // 4)
        centre = outline.mean(axis=0) - (x0, y0) + nprng.uniform(-0.3, 0.3, 2) * shown
        band = scene.glare_band((gh, gw), (centre[0] / 4, centre[1] / 4), rng.uniform(0, math.pi),
                                rng.uniform(0.03, 0.12) * shown / 4, plan.glare)
        band = cv2.resize(band, (x1 - x0, y1 - y0), interpolation=cv2.INTER_LINEAR) * np.minimum(alpha * 3, 1.0)
        region += (255.0 - region) * band[..., None]
    canvas[y0:y1, x0:x1] = np.clip(region, 0, 255).astype(np.uint8)


def _hand(canvas: np.ndarray, quad: np.ndarray, tone: tuple[int, int, int], rng: random.Random,
          nprng: np.random.Generator, palm: bool) -> None:
    """A palm under the card (before it is laid) or a thumb over one long edge (after)."""
    h_img, w_img = canvas.shape[:2]
    mask = np.zeros((h_img // 4, w_img // 4), np.uint8)
    centre = quad.mean(axis=0)
    card_w, card_h = np.linalg.norm(quad[1] - quad[0]), np.linalg.norm(quad[3] - quad[0])
    up = math.degrees(math.atan2(quad[0][1] - quad[3][1], quad[0][0] - quad[3][0]))
    if palm:
        axes = (card_w * rng.uniform(0.7, 1.0), card_h * rng.uniform(0.55, 0.8))
        at = centre + (quad[3] - quad[0]) * rng.uniform(0.1, 0.35)
    else:
        side = (quad[1], quad[2]) if rng.random() < 0.5 else (quad[0], quad[3])
        at = side[0] + (side[1] - side[0]) * rng.uniform(0.35, 0.6)
        at = at + (at - centre) / np.linalg.norm(at - centre) * card_w * rng.uniform(0.1, 0.16)
        axes = (card_w * 0.11, card_h * 0.16)
    cv2.ellipse(mask, (round(at[0] / 4), round(at[1] / 4)), (round(axes[0] / 4), round(axes[1] / 4)), up + 90, 0, 360,
                255, -1, cv2.LINE_AA)
    alpha = cv2.resize(cv2.GaussianBlur(mask, (0, 0), 1.2), (w_img, h_img)).astype(np.float32)[..., None] / 255
    ys, xs = np.nonzero(alpha[..., 0] > 0)
    if not len(ys):
        return
    y0, y1, x0, x1 = ys.min(), ys.max() + 1, xs.min(), xs.max() + 1
    skin = scene.skin(nprng, (y1 - y0, x1 - x0), tone)
    a = alpha[y0:y1, x0:x1]
    canvas[y0:y1, x0:x1] = np.clip(canvas[y0:y1, x0:x1] * (1 - a) + skin * a, 0, 255).astype(np.uint8)


def draw_photo(card: Image.Image, plan: PhotoPlan, others: tuple[Image.Image, ...] = ()) -> DrawnPhoto:
    """The photo `plan` describes, of `card` (and `others`, for a photo of several cards)."""
    rng = random.Random(f"draw:{plan.seed}:{plan.case}")
    nprng = np.random.default_rng(rng.getrandbits(64))
    w, h = plan.size
    surface = plan.background if plan.background != "skin" else rng.choice(("wood", "cloth", "playmat"))
    canvas = scene.background(surface, nprng, (w, h))
    faces = [np.asarray(card_face(c)) for c in (card, *others)][: plan.cards]
    while len(faces) < plan.cards:
        faces.append(faces[-1])
    quads: list[np.ndarray] = []
    for _ in faces:
        quads.append(_place(plan, rng, quads))
    hand = plan.background == "skin" and plan.case in ("single", "too-small")
    tone = scene.SKIN_TONES[rng.randrange(len(scene.SKIN_TONES))]
    if hand:
        _hand(canvas, quads[0], tone, rng, nprng, palm=True)
    for face, quad in zip(faces, quads, strict=True):
        _composite(canvas, face, quad, plan, rng, nprng)
    if hand and plan.thumb:
        _hand(canvas, quads[0], tone, rng, nprng, palm=False)
    if plan.light > 0:
        field = scene.light_field(nprng, (w, h), plan.light)
        canvas = np.clip(canvas * field[..., None], 0, 255).astype(np.uint8)
    canvas = scene.motion_blur(canvas, plan.blur_px, rng.uniform(0, math.pi))
    canvas = scene.add_grain(canvas, nprng, rng.uniform(1.5, 4.0))
    normalised = tuple(
        tuple((float(x) / w, float(y) / h) for x, y in quad) for quad in quads
    )
    return DrawnPhoto(Image.fromarray(canvas, "RGB"), normalised[0], normalised, plan)  # type: ignore[arg-type]
