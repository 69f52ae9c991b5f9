"""Synthetic catalogue: shape, determinism, the hard identification cases, size and speed."""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from datetime import date
from pathlib import Path

import pytest

from stage_e_dagster.demo.catalog import (
    BASICS,
    ERA_SHARES,
    frame_of,
    generate_catalog,
    set_printed_total,
    write_catalog,
)
from stage_e_dagster.demo.info import layout_of_card
from stage_e_dagster.domain.printed_lines import LAYOUTS

KEYS = {"id", "name", "set", "set_name", "collector_number", "lang", "released_at", "rarity", "artist",
        "border_color", "frame", "layout"}
UUID4 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


@pytest.fixture(scope="module")
def big() -> list[dict]:
    return generate_catalog(3000, seed=7)


def test_shape_of_every_card(big: list[dict]) -> None:
    assert len(big) == 3000
    for card in big:
        assert KEYS <= card.keys()
        assert UUID4.match(card["id"])
        assert re.fullmatch(r"[a-z0-9]{3,5}", card["set"])
        assert re.fullmatch(r"\d+[ab★]?", card["collector_number"])
        assert card["lang"] == "en"
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", card["released_at"])
        assert card["border_color"] in {"black", "white", "borderless", "silver", "gold"}
        assert card["frame"] == frame_of(date.fromisoformat(card["released_at"]))
        if card["layout"] == "transform":
            faces = card["card_faces"]
            assert len(faces) == 2 and card["name"] == f"{faces[0]['name']} // {faces[1]['name']}"
        else:
            assert card["layout"] == "normal" and "//" not in card["name"]
    assert len({c["id"] for c in big}) == len(big)
    assert len({(c["set"], c["collector_number"]) for c in big}) == len(big)


def test_deterministic_for_a_seed() -> None:
    assert generate_catalog(200, seed=3) == generate_catalog(200, seed=3)
    assert generate_catalog(200, seed=3) != generate_catalog(200, seed=4)


def test_sets_scale_with_printings(big: list[dict]) -> None:
    assert len({c["set"] for c in big}) == 20
    assert len({c["set"] for c in generate_catalog(100)}) == 6


@pytest.mark.parametrize("printings", [12, 3000])
def test_hard_cases_present(printings: int, big: list[dict]) -> None:
    cards = big if printings == 3000 else generate_catalog(printings)
    sets_of: dict[str, set[str]] = defaultdict(set)
    sets_of_number: dict[tuple[str, str], set[str]] = defaultdict(set)
    for card in cards:
        sets_of[card["name"]].add(card["set"])
        sets_of_number[(card["name"], card["collector_number"])].add(card["set"])
    assert max(len(s) for s in sets_of.values()) >= 3, "a name reprinted in several sets"
    assert any(len(s) >= 2 for s in sets_of_number.values()), "same name and number in two sets"
    assert any(c["frame"] in ("1997", "2003") for c in cards), "pre-2015 printings (no set code printed)"
    borders = {"black", "white", "silver", "gold"} | ({"borderless"} if printings > 100 else set())
    assert borders <= {c["border_color"] for c in cards}
    codes = sorted({c["set"] for c in cards})
    twins = [(a, b) for a in codes for b in codes
             if a < b and len(a) == len(b) and sum(x != y for x, y in zip(a, b, strict=True)) == 1]
    assert len(twins) >= 2, "set codes one OCR edit apart"


def test_special_collector_numbers_and_transform(big: list[dict]) -> None:
    numbers = {(c["set"], c["collector_number"]) for c in big}
    starred = [(code, n) for code, n in numbers if n.endswith("★")]
    assert starred and all((code, n[:-1]) in numbers for code, n in starred), "a premium twin beside its printing"
    assert any(n.endswith("a") for _, n in numbers)
    assert any(c["layout"] == "transform" for c in big)
    for card in big:
        digits = int(card["collector_number"].strip("★ab"))
        assert 1 <= digits <= max(set_printed_total(card["set"]), 400)


def test_eras_in_the_snapshots_shares_and_basics_numbered_last(big: list[dict]) -> None:
    shares = Counter(layout_of_card(c) for c in big)
    assert set(shares) == set(LAYOUTS)
    wanted = {"numberless": 0.17, "centred": 0.14, "legal-number": 0.35, "modern": 0.27, "rarity-first": 0.07}
    for layout, share in wanted.items():
        assert abs(shares[layout] / len(big) - share) < 0.06, (layout, shares[layout] / len(big))
    assert abs(sum(share for _, _, share in ERA_SHARES) - 1.0) < 1e-9
    basics = [c for c in big if c["name"] in BASICS]
    assert basics and all(c["type_line"].startswith("Basic Land") for c in basics)
    for card in basics:
        assert int(card["collector_number"]) > set_printed_total(card["set"]) - 5 * 4


def test_twenty_thousand_round_trip(tmp_path: Path) -> None:
    cards = generate_catalog(20_000, seed=0)
    path = tmp_path / "catalog.json"
    assert write_catalog(path, cards) == 20_000
    assert json.loads(path.read_text(encoding="utf-8")) == cards
    assert 120 <= len({c["set"] for c in cards}) <= 150


def test_empty_catalogue(tmp_path: Path) -> None:
    assert generate_catalog(0) == []
    write_catalog(tmp_path / "empty.json", [])
    assert json.loads((tmp_path / "empty.json").read_text()) == []
