"""The harder generated scans: unseen fonts from PyPI packages, the real layouts of every era and their variants,
profiles and their damage, determinism."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from stage_e_dagster.demo.catalog import generate_catalog
from stage_e_dagster.demo.hard import PROFILES, heavy_damage, plan_scans, read_catalog_of, unseen_fonts
from stage_e_dagster.demo.info import InfoStyle, collector_lines, layout_of_card, legal_lines
from stage_e_dagster.demo.render import render_scan, scan_size
from stage_e_dagster.domain.evidence.parse import normalise_collector_number
from stage_e_dagster.domain.printed_lines import CENTRED, LEGAL_NUMBER, NUMBERLESS, RARITY_FIRST
from stage_e_dagster.domain.printed_lines import MODERN as MODERN_LAYOUT

CARDS = generate_catalog(600, seed=11)


def test_unseen_fonts_come_from_the_font_packages() -> None:
    fonts = unseen_fonts()
    assert len(fonts) == 4
    assert {Path(f).parent.parent.name for f in fonts} == {"font_lato", "font_manrope", "font_hanken_grotesk",
                                                          "font_caladea"}


def _of(layout: str) -> dict:
    return next(c for c in CARDS if layout_of_card(c) == layout)


def test_bottom_lines_per_layout() -> None:
    total = 250
    modern, recent = _of(MODERN_LAYOUT), _of(RARITY_FIRST)
    first, second = collector_lines(modern, total)
    assert first.split("/")[0].lstrip("0") == modern["collector_number"] and first[-1] in "CURML"
    assert second == f"{modern['set'].upper()} • EN ✎ {modern['artist']}"
    assert collector_lines(modern, total, InfoStyle(foil=True))[1].startswith(f"{modern['set'].upper()} ★ EN")
    rarity, number = collector_lines(recent, total)[0].split()
    assert rarity in "CURML" and len(number) == 4 and number.lstrip("0") == recent["collector_number"]
    old = _of(LEGAL_NUMBER)
    assert collector_lines(old, total) == ("", None)  # the number is on the legal line
    credit, legal = legal_lines(old, total, None, InfoStyle(credit="illus"))
    assert credit == f"Illus. {old['artist']}"
    assert legal.endswith((f"Coast {old['collector_number']}/250", f"Inc. {old['collector_number']}/250"))
    assert legal_lines(_of(CENTRED), total, None)[1].endswith(f"Inc. {_of(CENTRED)['collector_number']}/250")
    credit, legal = legal_lines(_of(NUMBERLESS), total, None)
    assert credit.startswith("Illus.") and (legal is None or "/" not in legal)
    with pytest.raises(ValueError, match="unknown credit"):
        InfoStyle(credit="tilted")


def test_styled_scans_render_at_their_size_and_differ_from_the_demo_look() -> None:
    font = unseen_fonts()[0]
    for card in (_of(MODERN_LAYOUT), _of(LEGAL_NUMBER)):
        plain = render_scan(card, long_side=720, bleed=True)
        styled = render_scan(card, long_side=720, bleed=True,
                             style=InfoStyle(font, 0.9, (0.01, 0.0), "illus", list_mark=True))
        assert styled.size == plain.size == scan_size(720, True)
        assert styled.tobytes() != plain.tobytes()


def test_profiles_plan_what_they_promise() -> None:
    hard = plan_scans(CARDS, 200, "hard", seed=3)
    assert plan_scans(CARDS, 200, "hard", seed=3) == hard  # deterministic
    assert {s.long_side for s in hard} == set(PROFILES["hard"].heights)
    degraded = [s for s in hard if s.degradation is not None]
    assert 0.7 < len(degraded) / len(hard) < 0.9
    assert all(0.85 <= s.style.size <= 1.1 and s.style.font in unseen_fonts() for s in hard)
    assert {s.style.credit for s in hard} == {"brush", "illus"}
    modern = [s for s in hard if layout_of_card(s.card) in (MODERN_LAYOUT, RARITY_FIRST)]
    assert any(s.style.foil for s in modern) and not any(s.style.foil for s in hard if s not in modern)
    demo = plan_scans(CARDS, 50, "demo", seed=3)
    assert all(s.style == InfoStyle() and s.long_side in (1040, 1680) for s in demo)


def test_heavy_damage_ranges() -> None:
    rng = random.Random(2)
    for _ in range(200):
        d = heavy_damage(rng)
        assert d.jpeg_quality is not None and 50 <= d.jpeg_quality <= 80
        assert 0.8 <= d.blur_radius <= 1.4 and abs(d.rotation_deg) <= 2.0 and 2 <= d.noise_sigma <= 8


def test_read_catalog_of_a_generated_catalogue() -> None:
    catalog = read_catalog_of(CARDS)
    assert catalog.set_codes == {c["set"] for c in CARDS}
    assert catalog.codeless == {c["set"] for c in CARDS if c["frame"] != "2015"}
    modern = _of(MODERN_LAYOUT)
    key = (modern["set"], normalise_collector_number(modern["collector_number"]))
    assert key in catalog.printings_of(modern["name"])
    assert catalog.layouts_of(modern["set"]) == (MODERN_LAYOUT,)
    assert catalog.expected_layouts(_of(NUMBERLESS)["name"]) >= {NUMBERLESS}
