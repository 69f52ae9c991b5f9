"""How a setting is declared: the field helpers the groups use, and the parsers that turn a variable's text into
its value (each raises ValueError saying the form it wants)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import field
from pathlib import Path
from typing import Any


def text(value: str) -> str:
    return value


def flag(value: str) -> bool:
    lowered = value.strip().lower()
    if lowered in ("1", "on", "true", "yes"):
        return True
    if lowered in ("0", "off", "false", "no"):
        return False
    raise ValueError("expected on/off (or 1/0, true/false, yes/no)")


def bounded(convert: Callable[[str], Any], refused: Callable[[Any], bool], expected: str) -> Callable[[str], Any]:
    """A parser of numbers: `convert` the text, and refuse a number `refused` names with "expected <expected>"."""

    def parse(value: str) -> Any:
        number = convert(value)
        if refused(number):
            raise ValueError(f"expected {expected}")
        return number

    return parse


def number(value: str) -> float:
    """A finite decimal number: `nan` and the infinities parse as floats but bound nothing, so they are refused."""
    parsed = float(value)
    if not math.isfinite(parsed):
        raise ValueError(f"expected a finite number, not {value.strip()!r}")
    return parsed


positive_int = bounded(int, lambda n: n < 1, "a whole number of at least 1")
non_negative_int = bounded(int, lambda n: n < 0, "a whole number of at least 0")
fraction = bounded(number, lambda n: not 0 <= n <= 1, "a share from 0 to 1")
share = bounded(number, lambda n: not 0 < n <= 1, "a share above 0 and at most 1")
positive_float = bounded(number, lambda n: n <= 0, "a number above 0")
non_negative_float = bounded(number, lambda n: n < 0, "a number of at least 0")
port = bounded(int, lambda n: not 1 <= n <= 65535, "a port number from 1 to 65535")


def choice(*options: str) -> Callable[[str], str]:
    def parse(value: str) -> str:
        if value not in options:
            raise ValueError(f"expected one of {', '.join(options)}")
        return value

    return parse


def names(value: str) -> tuple[str, ...]:
    return tuple(name.strip() for name in value.split(",") if name.strip())


def pairs(value: str) -> tuple[tuple[str, str], ...]:
    found = []
    for item in names(value):
        folder, sep, code = item.partition("=")
        if not sep or not folder.strip() or not code.strip():
            raise ValueError("expected folder=code pairs separated by commas")
        found.append((folder.strip(), code.strip()))
    return tuple(found)


def path(value: str) -> Path:
    return Path(value).absolute()


def setting(var: str, default: Any, meaning: str, parse: Callable[[str], Any] = text, shown: str | None = None,
            documented: bool = True, secret: bool = False) -> Any:
    """A `Settings` field read from `var`; `shown` is the default as the README states it (else `default`); a
    `secret` one is left out of the settings' repr."""
    metadata = {"var": var, "meaning": meaning, "parse": parse, "shown": shown, "documented": documented}
    return field(default=default, metadata=metadata, repr=not secret)


def comma_list(var: str, default: tuple[Any, ...], meaning: str, parse: Callable[[str], tuple[Any, ...]] = names,
               shown: str | None = None) -> Any:
    """A setting that takes a comma-separated list: its meaning says so, and the README shows the default as its
    items joined by commas unless `shown` states it otherwise."""
    return setting(var, default, f"{meaning}; comma list", parse,
                   shown=f"`{','.join(default)}`" if shown is None else shown)
