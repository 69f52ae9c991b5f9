"""The layers of docs/design.md hold: `lint-imports` keeps every contract in pyproject.toml's `[tool.importlinter]`
(the domain pure, workers and db without Dagster, db without remote, commands only from cli.py, the job layers, no
import cycle among the package's modules or among sibling packages), and the module-cycle contract finds a cycle
closed by a function-level import."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import grimp
import pytest

from tools.import_contracts import cycles

ROOT = Path(__file__).resolve().parents[2]
LINT = Path(sys.executable).with_name("lint-imports")


def _lint(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(LINT), "--no-cache", "--no-logo", *args], cwd=ROOT, capture_output=True, text=True)


def test_every_enforced_import_contract_is_kept() -> None:
    done = _lint()
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


def test_a_cycle_closed_by_a_function_level_import_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "cyclic_probe"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "low.py").write_text(textwrap.dedent("""
        def late():
            from cyclic_probe import high  # the deferred import that hides the circle at load time
            return high
    """))
    (package / "high.py").write_text("from cyclic_probe import low\n")
    (package / "alone.py").write_text("from cyclic_probe import high\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    graph = grimp.build_graph("cyclic_probe", cache_dir=None)
    assert cycles(graph, "cyclic_probe") == [["cyclic_probe.high", "cyclic_probe.low"]]
