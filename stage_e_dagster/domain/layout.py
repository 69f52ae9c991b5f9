"""Card geometry shared by the scan renderer and the evidence extractors.

A card is 63 x 88 mm when trimmed. A print-ready scan carries 1/8 inch (3.175 mm) of bleed on every edge, so its
full image is 69.35 x 94.35 mm. Every region below is a box of fractions (left, top, right, bottom) of the *trim*
rectangle, so the same box finds the same part of the card whichever bleed class a scan has.
"""

from __future__ import annotations

from dataclasses import dataclass

TRIM_MM = (63.0, 88.0)
BLEED_MM = 3.175
TRIM_ASPECT = TRIM_MM[0] / TRIM_MM[1]
BLEED_ASPECT = (TRIM_MM[0] + 2 * BLEED_MM) / (TRIM_MM[1] + 2 * BLEED_MM)

Box = tuple[float, float, float, float]

# Where the renderer draws things (fractions of the trim rectangle).
ART_BOX: Box = (0.075, 0.115, 0.925, 0.555)
TYPE_LINE: Box = (0.06, 0.565, 0.94, 0.615)
SET_SYMBOL: Box = (0.855, 0.568, 0.925, 0.612)
TEXT_BOX: Box = (0.075, 0.63, 0.925, 0.88)

# Where the extractors look: the drawn region plus a margin for rotation (2 degrees moves the bottom-left corner
# by about 1.5% of the card), offsets, scale and a misjudged bleed class. The bottom band holds every layout's
# collector and legal lines (real cards print them between about 93.5% and 98% of the height, from 4% of the
# width to 96%: `domain.printed_lines`), and little of the frame above them; the collector crop is its
# bottom-left corner, where modern frames print the collector block.
BAND: Box = (0.0, 0.912, 1.0, 0.997)
COLLECTOR_CROP: Box = (0.0, 0.895, 0.45, 0.997)
SYMBOL_CROP: Box = (0.83, 0.560, 0.95, 0.620)
ART_CROP: Box = ART_BOX


@dataclass(frozen=True)
class TrimRect:
    """The trim rectangle of a scan, in pixels."""

    left: float
    top: float
    width: float
    height: float

    def crop_box(self, box: Box) -> tuple[int, int, int, int]:
        """Pixel box (left, top, right, bottom) of a fractional region, for `Image.crop`."""
        left, top, right, bottom = box
        return (
            round(self.left + left * self.width),
            round(self.top + top * self.height),
            round(self.left + right * self.width),
            round(self.top + bottom * self.height),
        )


def trim_rect(width: int, height: int, has_bleed: bool) -> TrimRect:
    """The trim rectangle inside a `width` x `height` scan with or without bleed."""
    if not has_bleed:
        return TrimRect(0.0, 0.0, float(width), float(height))
    bleed_x = width * BLEED_MM / (TRIM_MM[0] + 2 * BLEED_MM)
    bleed_y = height * BLEED_MM / (TRIM_MM[1] + 2 * BLEED_MM)
    return TrimRect(bleed_x, bleed_y, width - 2 * bleed_x, height - 2 * bleed_y)
