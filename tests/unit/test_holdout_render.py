"""The held-out renderer (`demo.holdout`): deterministic for a seed, draws each layout's lines where real cards
print them, keeps the profile it promises, has a real catalogue's shares and quirks, and shares no code with the
first renderer or the collector reader."""

from __future__ import annotations

import ast
import random
import re
from collections import Counter
from datetime import date
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from stage_e_dagster.demo import hard
from stage_e_dagster.demo.holdout import type as typeset
from stage_e_dagster.demo.holdout.border import Drawn
from stage_e_dagster.demo.holdout.catalog import BASICS, STAR, SetEntry, holdout_catalog
from stage_e_dagster.demo.holdout.lines import printed_lines
from stage_e_dagster.demo.holdout.plan import HoldoutScan, plan_holdout, read_catalog_of
from stage_e_dagster.domain.evidence.ocr import TesserocrEngine
from stage_e_dagster.domain.printed_lines import (
    CENTRED,
    LAYOUTS,
    LEGAL_NUMBER,
    MODERN,
    NUMBERLESS,
    RARITY_FIRST,
    layout_of,
)

CATALOGUE = holdout_catalog(3000, seed=4)
HOLDOUT_DIR = Path(typeset.__file__).parent
SHARES = {NUMBERLESS: 0.17, CENTRED: 0.14, LEGAL_NUMBER: 0.35, MODERN: 0.27, RARITY_FIRST: 0.07}
"""The catalogue's target shares of printings per layout (a 2019 snapshot, later sets added to the modern two)."""


def _layout(card: dict) -> str | None:
    return layout_of(card["frame"], date.fromisoformat(card["released_at"]))


def _relative(drawn: Drawn, box: tuple[int, int, int, int] | None) -> tuple[float, float, float, float]:
    """`box` as fractions of the card's width and height (left, top, right, bottom)."""
    assert box is not None
    x, y, w, h = drawn.card_box
    return (box[0] - x) / w, (box[1] - y) / h, (box[2] - x) / w, (box[3] - y) / h


def test_a_seed_plans_and_draws_the_same_scans() -> None:
    first, again = plan_holdout(CATALOGUE, 12, seed=3), plan_holdout(CATALOGUE, 12, seed=3)
    assert first == again
    assert plan_holdout(CATALOGUE, 12, seed=4) != first
    damaged = next(scan for scan in first if scan.damage is not None)
    assert damaged.jpeg() == damaged.jpeg()  # noise, light and JPEG damage are seeded too


def test_the_profile_keeps_its_promises() -> None:
    scans = plan_holdout(CATALOGUE, 400, seed=1)
    assert all(720 <= s.height <= 1680 for s in scans)
    assert len({s.height for s in scans}) > 100  # any height, not a few fixed ones
    damaged = [s.damage for s in scans if s.damage is not None]
    assert 0.72 < len(damaged) / len(scans) < 0.88
    assert all(0.8 <= d.blur_sigma <= 1.4 and abs(d.rotation_deg) <= 2 and 50 <= d.jpeg_quality <= 80
               for d in damaged)
    layouts = Counter(s.manifest()["layout"] for s in scans)
    assert set(layouts) == set(LAYOUTS)
    for layout, share in SHARES.items():  # scans sample printings uniformly, so they keep the catalogue's shares
        assert abs(layouts[layout] / len(scans) - share) < 0.06, (layout, layouts)
    digits = [s.look.cap for s in scans]
    assert 0.008 <= min(digits) and max(digits) <= 0.0131  # real type: about 1% of the card's height
    centred = [s.look.cap for s in scans if s.printed.layout == CENTRED]
    assert max(centred) < min(s.look.cap for s in scans if s.printed.layout == LEGAL_NUMBER) * 1.15


def test_the_catalogue_has_the_real_shares_and_quirks() -> None:
    cards, sets = CATALOGUE.cards, CATALOGUE.sets
    assert len(sets) >= 40
    layouts = Counter(_layout(card) for card in cards)
    for layout, share in SHARES.items():
        assert abs(layouts[layout] / len(cards) - share) < 0.02, (layout, layouts)
    modern_frame = layouts[MODERN] + layouts[RARITY_FIRST]
    assert 0.15 <= layouts[RARITY_FIRST] / modern_frame <= 0.25
    assert all(_layout(card) == sets[card["set"]].layout for card in cards)  # frame and date agree with the set
    assert all(card["released_at"] >= "2023-04-21" for card in cards if _layout(card) == RARITY_FIRST)
    basics = Counter(card["name"] for card in cards if card["name"] in BASICS)
    assert min(basics.values()) >= 10  # one basic land, many printings
    per_set = Counter((card["set"], card["name"]) for card in cards if card["name"] in BASICS)
    assert max(per_set.values()) >= 2  # several printings of one basic in one set
    assert len({(c["set"], c["collector_number"]) for c in cards}) == len(cards)
    numbers = {(c["set"], c["collector_number"]) for c in cards}
    starred = [(s, n) for s, n in numbers if n.endswith(STAR)]
    assert starred and all(_layout(c) in (CENTRED, LEGAL_NUMBER) for c in cards if c["collector_number"] in
                           {n for _, n in starred})
    assert any((s, n[:-1]) in numbers for s, n in starred)  # both the starred and the unstarred printing
    assert any((s, n[:-1]) not in numbers for s, n in starred)  # and a star alone
    assert any(re.fullmatch(r"\d+[ab]", c["collector_number"]) for c in cards)
    assert any(re.fullmatch(r"[A-Z]+\d+", c["collector_number"]) for c in cards)
    above = [c for c in cards if c["collector_number"].isdigit() and int(c["collector_number"]) >
             sets[c["set"]].printed_size]
    assert above and all(c["frame"] == "2015" for c in above)  # box toppers and showpieces
    showpieces = [c for c in cards if c["border_color"] == "borderless" or c["frame_effects"]]
    assert {"borderless", "showcase", "extendedart"} <= {c["border_color"] for c in showpieces} | {
        e for c in showpieces for e in c["frame_effects"]}
    assert all(c["frame"] == "2015" for c in showpieces)
    known = read_catalog_of(CATALOGUE)
    assert known.codeless == {code for code, e in sets.items() if e.layout in (LEGAL_NUMBER, CENTRED, NUMBERLESS)}
    assert all(known.totals[code] == entry.printed_size for code, entry in sets.items())


def test_sets_from_march_of_the_machine_on_print_the_rarity_first_and_earlier_2023_sets_do_not() -> None:
    card = {"collector_number": "172", "artist": "Rhea Holm", "rarity": "common", "type_line": "Instant", "lang": "en"}
    rng = random.Random(0)
    for day, first in ((date(2023, 2, 10), "172/281 C"), (date(2023, 4, 20), "172/281 C"),
                       (date(2023, 4, 21), "C 0172"), (date(2024, 9, 27), "C 0172")):
        printed = printed_lines(card, SetEntry("dsk", "Set", day, 281, "2015"), rng)
        assert printed.lines[0] == first and printed.prints_code


@pytest.fixture(scope="module")
def undamaged() -> list[HoldoutScan]:
    return plan_holdout(CATALOGUE, 400, seed=2, damaged=0.0)


def _some(scans: list[HoldoutScan], layout: str, count: int = 6) -> list[HoldoutScan]:
    found = [s for s in scans if s.printed.layout == layout][:count]
    assert found
    return found


def _inked(img: Image.Image, box: tuple[int, int, int, int] | None) -> bool:
    """Whether ink stands out from the background inside `box`."""
    assert box is not None
    patch = np.asarray(img.convert("L"), dtype=np.int16)[box[1] : box[3], box[0] : box[2]]
    return patch.size > 0 and int(patch.max()) - int(patch.min()) > 80


def test_the_2003_frame_prints_the_number_at_the_end_of_its_left_aligned_legal_line(undamaged) -> None:
    for scan in _some(undamaged, LEGAL_NUMBER):
        img, drawn = scan.draw()
        artist, legal = (_relative(drawn, box) for box in drawn.line_boxes)
        number = _relative(drawn, drawn.number_box)
        assert 0.40 <= (number[0] + number[2]) / 2 <= 0.50  # the number at 40-50% of the width
        assert 0.955 <= (number[1] + number[3]) / 2 <= 0.975 and number[3] <= 0.98
        assert abs(number[2] - legal[2]) < 0.002  # the line ends in the number
        assert 0.06 <= artist[0] <= 0.10 and 0.06 <= legal[0] <= 0.10  # both from about 8% of the width
        assert artist[3] < legal[1]  # the artist over the legal line
        assert scan.expected == (scan.card["collector_number"], None)  # no set code printed
        assert not re.search(r"\b[CURML]\b", scan.printed.lines[1])  # no rarity letter
        assert _inked(img, drawn.number_box)
        for name, box in drawn.marks:
            if name == "pt":  # the P/T box on the right, above the border's lines
                assert _relative(drawn, box)[0] > 0.7 and _relative(drawn, box)[3] < artist[1]


def test_the_1997_frame_centres_its_lines_with_the_number_after_the_legal_text(undamaged) -> None:
    for scan in _some(undamaged, CENTRED):
        img, drawn = scan.draw()
        credit, legal = (_relative(drawn, box) for box in drawn.line_boxes)
        number = _relative(drawn, drawn.number_box)
        assert abs((credit[0] + credit[2]) / 2 - 0.5) < 0.02 and abs((legal[0] + legal[2]) / 2 - 0.5) < 0.02
        assert abs(number[2] - legal[2]) < 0.002 and number[0] > 0.5
        assert credit[3] < legal[1] and 0.94 <= legal[3] <= 0.975
        assert scan.printed.lines[0].startswith("Illus. ") and "/" in scan.printed.number
        assert _inked(img, drawn.number_box)


@pytest.mark.parametrize("layout", [MODERN, RARITY_FIRST])
def test_the_modern_frame_sets_a_block_at_the_left_and_the_legal_line_at_the_right(undamaged, layout) -> None:
    for scan in _some(undamaged, layout):
        img, drawn = scan.draw()
        first, second, legal = (_relative(drawn, box) for box in drawn.line_boxes)
        assert first[0] < 0.08 and second[0] < 0.08 and first[3] < second[1]  # number over code and artist
        assert legal[2] > 0.9 and legal[0] > max(first[2], second[2])  # legal line right-aligned, clear of it
        assert 0.94 <= second[3] <= 0.98
        assert scan.expected == (scan.card["collector_number"], scan.entry.code)
        assert re.match(rf"^{scan.entry.code.upper()} [•★] EN ✎ ", scan.printed.lines[1])
        number = scan.printed.number
        if layout == RARITY_FIRST:  # rarity letter first, four digits, no total
            assert re.fullmatch(r"[CURML] [A-Z]*\d{4}", scan.printed.lines[0]) and "/" not in number
        else:
            assert re.fullmatch(r"[A-Z]*\d+/\d+ [CURML]", scan.printed.lines[0])
        assert _inked(img, drawn.number_box)
        marks = dict(drawn.marks)
        if scan.card["rarity"] in ("rare", "mythic"):  # the holofoil oval at the bottom centre
            oval = _relative(drawn, marks["holofoil"])
            assert abs((oval[0] + oval[2]) / 2 - 0.5) < 0.01 and first[2] < oval[0] and oval[2] < legal[0]
        if scan.printed.list_mark:
            assert _relative(drawn, marks["list"])[2] <= first[0]


def test_numberless_cards_print_the_artist_and_from_legends_a_copyright_year(undamaged) -> None:
    scans = _some(undamaged, NUMBERLESS, 12)
    for scan in scans:
        img, drawn = scan.draw()
        assert drawn.number_box is None and scan.printed.number_line is None
        assert scan.expected == (None, None)
        assert not any("/" in line for line in scan.printed.lines)
        assert scan.printed.lines[0].startswith("Illus. ")
        legends = scan.card["released_at"] >= "1994-06-01"
        assert (len(scan.printed.lines) == 2) == legends
        if legends:
            assert re.fullmatch(rf"© {scan.card['released_at'][:4]} Wizards of the Coast, Inc.",
                                scan.printed.lines[1])
        assert all(_inked(img, box) for box in drawn.line_boxes)
    assert {scan.card["frame"] for scan in scans} == {"1993", "1997"}


def test_variants_print_where_real_ones_do() -> None:
    scans = plan_holdout(CATALOGUE, 3000, seed=9, damaged=0.0)
    starred = next(s for s in scans if s.card["collector_number"].endswith(STAR))
    assert re.search(rf"\d{STAR}/\d+$", starred.printed.lines[1])  # "123★/350"
    premium = next(s for s in scans if s.printed.prints_code and s.printed.premium)
    assert f" {STAR} EN" in premium.printed.lines[1]  # "M19 ★ EN"
    suffixed = next(s for s in scans if s.printed.suffix)
    assert re.search(r"\d+[ab]/\d+$", suffixed.printed.lines[-1])
    borderless = next(s for s in scans if s.card["border_color"] == "borderless")
    img, drawn = borderless.draw()
    gray = np.asarray(img.convert("L"))
    box = drawn.number_box
    assert gray[box[1] : box[3], box[0] : box[2]].max() > 200  # white over the art
    assert sum(s.printed.list_mark for s in scans if s.printed.prints_code) > 0
    assert not any(s.printed.list_mark for s in scans if not s.printed.prints_code)


@pytest.mark.parametrize("layout", [MODERN, RARITY_FIRST, LEGAL_NUMBER, CENTRED])
def test_ocr_of_a_large_clean_scan_reads_the_printed_number(layout: str) -> None:
    scans = plan_holdout(CATALOGUE, 200, seed=2, heights=(1600, 1680), damaged=0.0)
    scan = next(s for s in scans if s.printed.layout == layout and not s.printed.premium)
    img, drawn = scan.draw()
    box, pad = drawn.line_boxes[scan.printed.number_line], 12
    line = img.crop((box[0] - pad, box[1] - pad, box[2] + pad, box[3] + pad)).convert("L")
    text = TesserocrEngine().read(line, psm=7).replace(" ", "")
    assert scan.printed.number in text, (text, scan.printed.lines)


def test_the_faces_are_not_the_first_renderers() -> None:
    packages = {package for package, _ in typeset.FACES.values()}
    assert not packages & set(hard.FONT_PACKAGES)
    for face in typeset.FACES:
        assert Path(typeset.face_path(face)).is_file()


@pytest.mark.parametrize("module", sorted(p.name for p in HOLDOUT_DIR.glob("*.py")))
def test_no_holdout_module_imports_the_first_renderer_or_the_reader(module: str) -> None:
    """Independent code: nothing of the first renderer's drawing, text, art, damage or catalogue is imported, and
    of the collector reader only the catalogue interface it is told what it may know through."""
    first = {"render", "info", "text", "art", "symbols", "hard", "catalog", "generate"}
    tree = ast.parse((HOLDOUT_DIR / module).read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            assert not any(alias.name.startswith("stage_e_dagster.demo.") and ".holdout" not in alias.name
                           for alias in node.names), f"{module} imports the first renderer"
        if isinstance(node, ast.ImportFrom) and node.module:
            parts = node.module.split(".")
            if parts[:2] == ["stage_e_dagster", "demo"] and len(parts) > 2:
                assert parts[2] == "holdout" or parts[2] not in first, f"{module} imports {node.module}"
            if node.module == "stage_e_dagster.demo":
                assert all(alias.name not in first for alias in node.names), f"{module} imports {node.module}"
            if parts[:3] == ["stage_e_dagster", "domain", "evidence"]:
                assert node.module == "stage_e_dagster.domain.evidence.read_catalog", f"{module} imports {node.module}"
