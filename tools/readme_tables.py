"""The README's two generated tables, made from the code: the environment variables (every `Settings` field) and
the resource fields (every field of every resource in the definitions, its default as deployed, its meaning, and
the variable that sets it).

Which variable sets which resource field is found out, not written down: the definitions are built once from the
default settings and once per variable with that variable changed, and the fields that move are the ones it sets.
So the table follows `definitions.build_definitions` and cannot drift from it.

`python tools/readme_tables.py` prints both tables; with `--write` it replaces the README's tables with them. The
tests `test_settings.py` and `test_reference.py` fail until the README matches.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, get_args

from dagster import ConfigurableResource
from pydantic_core import PydanticUndefined

from stage_e_dagster.settings import Settings, SettingsError

README = Path(__file__).resolve().parents[1] / "README.md"


@dataclass(frozen=True)
class Variable:
    """One documented environment variable: its name, its default as the README states it, and its meaning."""

    name: str
    default: str
    meaning: str


def variables() -> list[Variable]:
    """Every documented variable, in declaration order (the README's configuration table)."""
    out = []
    for f in fields(Settings):
        if not f.metadata["documented"]:
            continue
        shown = f.metadata["shown"] if f.metadata["shown"] is not None else str(f.default)
        out.append(Variable(f.metadata["var"], shown, f.metadata["meaning"]))
    return out


def configuration_table() -> str:
    """The README's configuration table, as markdown (a test keeps the README equal to it)."""
    lines = ["| variable | default | meaning |", "| --- | --- | --- |"]
    lines += [f"| `{v.name}` | {v.default} | {v.meaning} |" for v in variables()]
    return "\n".join(lines)


_CANDIDATES = ("7", "2.5", "0.5", "off", "on", "machine-quorum", "pytesseract", "*/7 * * * *", "Europe/Paris",
               "http://example.invalid:1", "global", "none")
"""Values tried, in order, to change a setting: the first one its parser takes that differs from its default."""


def _variants(name: str) -> Iterator[Settings]:
    """The default settings with setting `name` changed to each other value its parser takes."""
    base = Settings.from_env({})
    meta = next(f.metadata for f in fields(Settings) if f.name == name)
    for raw in _CANDIDATES:
        try:
            value = meta["parse"](raw)
        except (ValueError, SettingsError):
            continue
        if value != getattr(base, name):
            yield replace(base, **{name: value})


def is_resource(annotation: Any) -> bool:
    """Whether a field holds a nested resource (a dependency, optional or not), not a config value."""
    return any(isinstance(kind, type) and issubclass(kind, ConfigurableResource)
               for kind in (annotation, *get_args(annotation)))


def _plain_fields(resource: ConfigurableResource) -> dict[str, Any]:
    """The resource's own config fields (nested resources left out) and their values."""
    return {name: getattr(resource, name) for name, info in type(resource).model_fields.items()
            if not is_resource(info.annotation)}


def _resources(settings: Settings) -> dict[str, ConfigurableResource]:
    from stage_e_dagster.definitions import build_definitions

    return dict(build_definitions(settings).resources or {})


def set_by() -> dict[tuple[str, str], str]:
    """(resource key, field) -> the environment variable whose setting the definitions pass into that field."""
    base = {key: _plain_fields(resource) for key, resource in _resources(Settings.from_env({})).items()}
    found: dict[tuple[str, str], str] = {}
    for f in fields(Settings):
        resources = None
        for variant in _variants(f.name):
            try:
                resources = _resources(variant)
                break
            except ValueError:  # a value the definitions refuse (a cron that is no cron): try the next
                continue
        for key, resource in (resources or {}).items():
            for name, value in _plain_fields(resource).items():
                if value != base[key][name]:
                    found[(key, name)] = f.metadata["var"]
    return found


def _shown(value: Any) -> str:
    if value is None:
        return "unset"
    return f"`{value}`"


def resource_table() -> str:
    """The README's resource table, as markdown."""
    variables = set_by()
    lines = ["| resource | field | default, or the variable that sets it | meaning |", "| --- | --- | --- | --- |"]
    for key, resource in sorted(_resources(Settings.from_env({})).items()):
        for name, info in type(resource).model_fields.items():
            if is_resource(info.annotation):
                continue
            if name == "database_url":
                default = "`STAGE_E_DATABASE_URL` (an `EnvVar`)"
            elif (key, name) in variables:
                default = f"`{variables[(key, name)]}`"
            else:
                default = _shown(info.default if info.default is not PydanticUndefined else None)
            meaning = (info.description or "").replace("|", "\\|")
            lines.append(f"| `{key}` ({type(resource).__name__}) | `{name}` | {default} | {meaning} |")
    return "\n".join(lines)


def replace_table(text: str, table: str) -> str:
    """`text` with the Markdown table that starts with `table`'s header line replaced by `table`."""
    header = table.splitlines()[0]
    lines = text.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.rstrip("\n") == header)
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    return "".join(lines[:start]) + table.rstrip("\n") + "\n" + "".join(lines[end:])


if __name__ == "__main__":
    tables = (configuration_table(), resource_table())
    if "--write" in sys.argv[1:]:
        text = README.read_text(encoding="utf-8")
        for table in tables:
            text = replace_table(text, table)
        README.write_text(text, encoding="utf-8")
    else:
        print(f"{tables[0]}\n\n{tables[1]}")
