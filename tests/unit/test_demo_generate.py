"""Demo data set writer and its CLI: output layout, manifest truth, file names, determinism."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from PIL import Image

from stage_e_dagster.demo.cli import demo
from stage_e_dagster.demo.generate import generate, safe_file_stem
from stage_e_dagster.demo.render import scan_size


def test_generate_small_run(tmp_path: Path) -> None:
    ticks: list[int] = []
    summary = generate(tmp_path / "out", printings=12, cards=10, seed=1, degraded_fraction=0.5,
                       progress=ticks.append)
    out = tmp_path / "out"
    assert sum(ticks) == 10 and summary.scans == 10 and summary.printings == 12
    catalog = json.loads((out / "catalog.json").read_text(encoding="utf-8"))
    assert len(catalog) == 12
    codes = {c["set"] for c in catalog}
    assert summary.sets == len(codes) == 6
    assert {p.stem for p in (out / "symbols").glob("*.png")} == codes
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert len(manifest) == 10
    ids = {c["id"]: c for c in catalog}
    for rel, truth in manifest.items():
        path = out / "scans" / rel
        assert path.is_file() and path.suffix in (".jpg", ".png")
        assert truth.keys() == {"scryfall_id", "long_side", "bleed", "degraded"}
        assert truth["scryfall_id"] in ids and truth["long_side"] in (1040, 1680)
        with Image.open(path) as img:
            assert img.size == scan_size(truth["long_side"], truth["bleed"])
        assert "//" not in rel.split("/", 1)[1]
    assert sum(t["degraded"] for t in manifest.values()) == summary.degraded
    assert "10 scans" in summary.line()


def test_generate_is_deterministic_and_spreads_directories(tmp_path: Path) -> None:
    generate(tmp_path / "a", printings=40, cards=0, seed=3)
    generate(tmp_path / "b", printings=40, cards=0, seed=3)
    assert (tmp_path / "a" / "catalog.json").read_bytes() == (tmp_path / "b" / "catalog.json").read_bytes()
    from stage_e_dagster.demo.catalog import generate_catalog
    from stage_e_dagster.demo.generate import _plan

    jobs = _plan(generate_catalog(300, 0), 450, 0, 0.3, tmp_path / "scans")
    paths = [job.path for job in jobs]
    assert len(set(paths)) == len(paths)
    assert {p.parent.name for p in paths} == {"000", "001", "002", "003", "004"}
    names = [p.name for p in paths]
    assert any("[" not in n for n in names) and any("(" in n for n in names)
    assert sum(n.endswith(".png") for n in names) < sum(n.endswith(".jpg") for n in names)
    assert len({(j.long_side, j.bleed) for j in jobs}) == 4


def test_safe_file_stem() -> None:
    assert safe_file_stem("Ember Wurm // Ashen Wurm") == "Ember Wurm"
    assert safe_file_stem("What? Yes/No") == "What- Yes-No"


def test_cli_generate(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        demo, ["generate", "--printings", "12", "--cards", "3", "--out", str(tmp_path / "cli"), "--seed", "2",
               "--degraded-fraction", "0"],
    )
    assert result.exit_code == 0, result.output
    assert "3 scans" in result.output and "0 degraded" in result.output
    manifest = json.loads((tmp_path / "cli" / "manifest.json").read_text(encoding="utf-8"))
    assert len(manifest) == 3 and not any(t["degraded"] for t in manifest.values())
    bad = CliRunner().invoke(demo, ["generate", "--printings", "0", "--cards", "1", "--out", str(tmp_path / "x")])
    assert bad.exit_code != 0
