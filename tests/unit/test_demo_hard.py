"""The harder generated scans: unseen fonts from PyPI packages, the credit and old-style layouts, profiles and
their damage, determinism."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from stage_e_dagster.demo.catalog import generate_catalog
from stage_e_dagster.demo.hard import PROFILES, heavy_damage, plan_scans, read_catalog_of, unseen_fonts
from stage_e_dagster.demo.info import InfoStyle, collector_lines
from stage_e_dagster.demo.render import render_scan, scan_size
from stage_e_dagster.domain.evidence.parse import normalise_collector_number

CARDS = generate_catalog(600, seed=11)
MODERN = next(c for c in CARDS if c["frame"] == "2015")
OLD = next(c for c in CARDS if c["frame"] != "2015")


def test_unseen_fonts_come_from_the_font_packages() -> None:
    fonts = unseen_fonts()
    assert len(fonts) == 4
    assert {Path(f).parent.parent.name for f in fonts} == {"font_lato", "font_manrope", "font_hanken_grotesk",
                                                          "font_caladea"}


def test_collector_lines_per_layout() -> None:
    credit, old = InfoStyle(layout="credit"), InfoStyle(layout="old-style")
    total = 250
    number = f"{MODERN['collector_number']}/{total}"
    assert collector_lines(MODERN, total, credit)[1].endswith(f"• EN ✎ {MODERN['artist']}")
    assert collector_lines(MODERN, total, old)[0].startswith(number)  # old-style applies to old frames only
    assert collector_lines(OLD, total, old) == (f"{OLD['collector_number']}/{total}", f"Illus. {OLD['artist']}")
    assert collector_lines(OLD, total, InfoStyle()) == (f"{OLD['collector_number']}/{total}", None)
    with pytest.raises(ValueError, match="unknown layout"):
        InfoStyle(layout="tilted")


def test_styled_scans_render_at_their_size_and_differ_from_the_demo_look() -> None:
    font = unseen_fonts()[0]
    for card, layout in ((MODERN, "credit"), (OLD, "old-style")):
        plain = render_scan(card, long_side=720, bleed=True)
        styled = render_scan(card, long_side=720, bleed=True, style=InfoStyle(font, 0.6, (0.01, 0.0), layout))
        assert styled.size == plain.size == scan_size(720, True)
        assert styled.tobytes() != plain.tobytes()


def test_profiles_plan_what_they_promise() -> None:
    hard = plan_scans(CARDS, 200, "hard", seed=3)
    assert plan_scans(CARDS, 200, "hard", seed=3) == hard  # deterministic
    assert {s.long_side for s in hard} == set(PROFILES["hard"].heights)
    degraded = [s for s in hard if s.degradation is not None]
    assert 0.7 < len(degraded) / len(hard) < 0.9
    assert all(0.5 <= s.style.size <= 1.0 and s.style.font in unseen_fonts() for s in hard)
    assert {s.style.layout for s in hard if s.card["frame"] == "2015"} == {"credit", "demo"}
    assert {s.style.layout for s in hard if s.card["frame"] != "2015"} == {"old-style", "demo"}
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
    key = (MODERN["set"], normalise_collector_number(MODERN["collector_number"]))
    assert key in catalog.printings_of(MODERN["name"])
