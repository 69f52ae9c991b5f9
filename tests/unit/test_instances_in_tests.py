"""Production's storage where it matters: every Dagster instance in tests that is not on dagster-postgres (an
ephemeral or `instance_for_test` one, or the in-memory instance `materialize` and `execute_in_process` make when
given none) says, in its test, why storage cannot matter there (docs/testing.md)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
IN_MEMORY = {"ephemeral", "instance_for_test"}
RUNS = {"materialize", "execute_in_process"}
REASON = "cannot matter"


def _name(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def unexplained(path: Path, root: Path = ROOT) -> list[str]:
    """`file:line` of each in-memory instance in `path` whose enclosing function does not say why."""
    source = path.read_text(encoding="utf-8")
    found = []
    for function in ast.walk(ast.parse(source)):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        said = REASON in (ast.get_source_segment(source, function) or "")
        for call in ast.walk(function):
            if not isinstance(call, ast.Call):
                continue
            name = _name(call)
            in_memory = name in IN_MEMORY or (name in RUNS and not any(k.arg == "instance" for k in call.keywords))
            if in_memory and not said:
                found.append(f"{path.relative_to(root)}:{call.lineno} ({name})")
    return sorted(set(found))


def test_every_in_memory_instance_in_the_tests_says_why_storage_cannot_matter() -> None:
    files = [p for p in (ROOT / "tests").rglob("*.py") if p.name != Path(__file__).name]
    assert [line for path in files for line in unexplained(path)] == []


def test_the_check_finds_an_unexplained_one_and_passes_the_others(tmp_path: Path) -> None:
    probe = tmp_path / "test_probe.py"
    probe.write_text("def test_x(job):\n    job.execute_in_process()\n\n\ndef test_y(job, instance):\n"
                     "    job.execute_in_process(instance=instance)\n\n\ndef test_z():\n"
                     "    # In memory: storage cannot matter, it reads its own result.\n    materialize([])\n")
    assert unexplained(probe, tmp_path) == ["test_probe.py:2 (execute_in_process)"]
