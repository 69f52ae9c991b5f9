"""Every kind of upload in the generated data: the catalogue's added printings, the shares scans are drawn in, and
file names that the source conventions (`domain.kinds`) read as the kind they were drawn as."""

from __future__ import annotations

import json
from collections import Counter
from datetime import date
from pathlib import Path

import pytest

from stage_e_dagster.demo import forms
from stage_e_dagster.demo.catalog import generate_catalog
from stage_e_dagster.demo.generate import generate
from stage_e_dagster.demo.info import collector_lines
from stage_e_dagster.demo.render import front_name
from stage_e_dagster.domain.kinds import classify, machine_ineligibility, name_and_hint, printing_fits


@pytest.fixture(scope="module")
def catalog() -> list[dict]:
    return forms.extend_catalog(generate_catalog(1500, seed=4), seed=4)


def test_the_demo_catalogue_is_kept_and_extended_with_every_form(catalog: list[dict]) -> None:
    base = generate_catalog(1500, seed=4)
    assert catalog[: len(base)] == base
    added = catalog[len(base):]
    old = [c for c in added if c["frame"] == "1993"]
    assert old and all(date.fromisoformat(c["released_at"]) < date(1998, 6, 1) for c in old)
    by_name: dict[str, set[tuple[str, str]]] = {}
    for card in old:
        by_name.setdefault(card["name"], set()).add((card["border_color"], card["released_at"][:4]))
    assert any(len(looks) >= 2 for looks in by_name.values())  # a name the era calculator has to tell apart
    tokens = [c for c in added if forms.is_token(c)]
    assert tokens and all(printing_fits("token", c["layout"], c.get("set_type")) for c in tokens)
    assert all(c["set"].startswith("t") for c in tokens)
    assert sum(len({c["set"] for c in tokens if c["name"] == n}) >= 2 for n in forms.TOKEN_NAMES) >= 3
    numbers = [str(c["collector_number"]) for c in added]
    assert any(n.endswith("s") for n in numbers) and any(n.startswith("A-") for n in numbers)


def test_kinds_are_drawn_in_their_documented_shares(catalog: list[dict]) -> None:
    planned = forms.plan_kinds(catalog, 4000, seed=2)
    counts = Counter(scan.kind for scan in planned)
    for kind, share in forms.KIND_SHARES:
        assert counts[kind] / len(planned) == pytest.approx(share, abs=0.025), kind


EXPECTED = {  # kind -> (upload kind, reason no machine votes)
    "card": ("card", None), "suffixed": ("card", None), "numberless": ("card", None),
    "language-marker": ("card", None), "token": ("token", None), "card-back": ("cardback", "card-back"),
    "custom-art": ("card", "custom-art"), "foreign": ("card", "non-english"),
}


def test_each_kind_is_named_as_the_source_conventions_read_it(catalog: list[dict]) -> None:
    for scan in forms.plan_kinds(catalog, 600, seed=3):
        upload = classify(scan.path)
        assert (upload.kind, machine_ineligibility(upload, 745, 1040)) == EXPECTED[scan.kind], scan.path
        if scan.card is not None:
            assert name_and_hint(scan.path)[0] == front_name(scan.card)
            assert printing_fits(upload.kind, scan.card.get("layout"), scan.card.get("set_type"))


def test_each_kind_prints_what_it_is_drawn_as(catalog: list[dict]) -> None:
    planned = forms.plan_kinds(catalog, 600, seed=3)
    for scan in planned:
        if scan.kind == "numberless":
            assert collector_lines(scan.drawn, 280) == ("", None)
        elif scan.kind in ("language-marker", "foreign"):
            second = collector_lines(scan.drawn, 280)[1]
            assert second is not None and not second.endswith("EN")
        elif scan.kind == "suffixed":
            assert not str(scan.card["collector_number"]).isdigit()
        elif scan.kind == "custom-art":
            assert scan.drawn["art_seed"] != scan.card["name"]
    assert {s.kind for s in planned} == set(forms.SCAN_KINDS)


def test_generate_with_kinds_writes_each_kind_and_its_truth(tmp_path: Path) -> None:
    summary = generate(tmp_path, printings=300, cards=24, seed=3, kinds=True, workers=1)
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert summary.scans == len(manifest) == 24
    assert {truth["kind"] for truth in manifest.values()} >= {"card", "card-back", "token"}
    for path, truth in manifest.items():
        assert (tmp_path / "scans" / path).is_file()
        assert (truth["scryfall_id"] is None) == (truth["kind"] == "card-back")
        assert classify(path).kind == EXPECTED[truth["kind"]][0]
