"""The last line of a drill script: `<name>: PASS <figures>` or `<name>: FAIL <why>; <figures>`, and its exit code."""

from __future__ import annotations

import sys
import traceback
from collections.abc import Callable, Mapping
from typing import Any


def line(name: str, failure: str | None, figures: Mapping[str, Any]) -> str:
    shown = " ".join(f"{key}={value}" for key, value in figures.items())
    return f"{name}: PASS {shown}".rstrip() if failure is None else f"{name}: FAIL {failure}; {shown}".rstrip("; ")


def main(name: str, drill: Callable[[dict[str, Any]], None]) -> None:
    """Run `drill(figures)`, which fills `figures` as it goes and raises AssertionError on a broken rule; print the
    verdict line last and exit 0 on PASS, 1 on FAIL."""
    figures: dict[str, Any] = {}
    failure = None
    try:
        drill(figures)
    except Exception as err:  # noqa: BLE001 - any error is the drill's failure, reported on its one line
        traceback.print_exc()
        failure = f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"[:300]
    print(line(name, failure, figures), flush=True)
    sys.exit(0 if failure is None else 1)
