"""The held-out renderer (`demo.holdout`): deterministic for a seed, draws what its manifest says where the reader
looks, keeps the profile it promises, has a real catalogue's quirks, and shares no code with the first renderer."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from stage_e_dagster.demo import hard
from stage_e_dagster.demo.holdout import type as typeset
from stage_e_dagster.demo.holdout.catalog import BASICS, holdout_catalog
from stage_e_dagster.demo.holdout.plan import plan_holdout, read_catalog_of
from stage_e_dagster.domain import layout
from stage_e_dagster.domain.evidence.ocr import TesserocrEngine

CATALOGUE = holdout_catalog(3000, seed=4)
HOLDOUT_DIR = Path(typeset.__file__).parent


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
    styles = Counter(s.printed.style for s in scans)
    assert {"number", "number-credit", "credit-number", "code-credit", "code", "padded", "rarity-first"} <= set(styles)
    old = [s for s in scans if not s.printed.prints_code]
    assert all("/" in s.printed.lines[s.printed.number_line] for s in old)  # "42/350", no set code
    assert 0.45 < len(old) / len(scans) < 0.7


def test_the_catalogue_has_a_real_ones_quirks() -> None:
    cards, sets = CATALOGUE.cards, CATALOGUE.sets
    assert len(sets) >= 40
    old = sum(card["frame"] != "2015" for card in cards) / len(cards)
    assert 0.5 < old < 0.65
    basics = Counter(card["name"] for card in cards if card["name"] in BASICS)
    assert min(basics.values()) >= 10  # one basic land, many printings
    per_set = Counter((card["set"], card["name"]) for card in cards if card["name"] in BASICS)
    assert max(per_set.values()) >= 2  # several printings of one basic in one set
    assert any(sets[c["set"]].padded for c in cards)
    assert any(int(c["collector_number"]) > sets[c["set"]].printed_size for c in cards)
    known = read_catalog_of(CATALOGUE)
    assert known.codeless == {code for code, entry in sets.items() if not entry.prints_code}
    assert all(known.totals[code] == entry.printed_size for code, entry in sets.items())


def test_a_scan_draws_its_manifest_lines_inside_the_collector_crop() -> None:
    """Each planned line is drawn (ink in its box) inside the region the reader crops, and OCR of an undamaged
    large scan reads the manifest's number line back."""
    scans = plan_holdout(CATALOGUE, 60, seed=2, heights=(1500, 1680), damaged=0.0)
    engine = TesserocrEngine()
    for style in ("number-credit", "code-credit", "padded"):
        scan = next(s for s in scans if s.printed.style == style)
        img, drawn = scan.draw()
        manifest = scan.manifest()
        assert len(drawn.line_boxes) == len(manifest["lines"])
        left, top, right, bottom = layout.trim_rect(img.width, img.height, scan.bleed).crop_box(
            layout.COLLECTOR_CROP)
        gray = np.asarray(img.convert("L"), dtype=np.int16)
        background = int(np.median(gray[bottom - 3 : bottom, left + 5 : left + 40]))
        for box in drawn.line_boxes:
            assert left <= box[0] and box[2] <= right + 0.5 * (right - left)  # a credit may run past the crop
            assert top <= box[1] and box[3] <= bottom
            patch = gray[box[1] : box[3], box[0] : box[2]]
            assert np.abs(patch - background).max() > 100  # ink is drawn there
        number_box = drawn.line_boxes[manifest["number_line"]]
        pad = 12
        line = img.crop((number_box[0] - pad, number_box[1] - pad, number_box[2] + pad, number_box[3] + pad))
        text = engine.read(line.convert("L"), psm=7).strip().replace(" ", "")
        assert text == manifest["lines"][manifest["number_line"]].replace(" ", "")


def test_the_faces_are_not_the_first_renderers() -> None:
    packages = {package for package, _ in typeset.FACES.values()}
    assert not packages & set(hard.FONT_PACKAGES)
    for face in typeset.FACES:
        assert Path(typeset.face_path(face)).is_file()


@pytest.mark.parametrize("module", sorted(p.name for p in HOLDOUT_DIR.glob("*.py")))
def test_no_holdout_module_imports_the_first_renderer(module: str) -> None:
    """Independent code: nothing of the first renderer's drawing, text, art, damage or catalogue is imported."""
    first = {"render", "info", "text", "art", "symbols", "hard", "catalog", "generate"}
    tree = ast.parse((HOLDOUT_DIR / module).read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            parts = node.module.split(".")
            if parts[:2] == ["stage_e_dagster", "demo"] and len(parts) > 2:
                assert parts[2] == "holdout" or parts[2] not in first, f"{module} imports {node.module}"
            if node.module == "stage_e_dagster.demo":
                assert all(alias.name not in first for alias in node.names), f"{module} imports {node.module}"
