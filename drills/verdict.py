"""The last line of a drill: `<name>: PASS <figures>` or `<name>: FAIL <why>; <figures>`, and its exit code; and the
`main` every drill module shares (its size options parsed, its `run` called, the verdict printed)."""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Callable, Mapping
from typing import Any


def line(name: str, failure: str | None, figures: Mapping[str, Any]) -> str:
    shown = " ".join(f"{key}={value}" for key, value in figures.items())
    return f"{name}: PASS {shown}".rstrip() if failure is None else f"{name}: FAIL {failure}; {shown}".rstrip("; ")


def drill_main(name: str, run: Callable[..., dict[str, Any]], parser: argparse.ArgumentParser,
               argv: list[str] | None) -> None:
    """`python -m drills NAME [size options]`: parse the options with `parser`, call `run(figures, **options)`,
    end with the verdict line."""
    options = vars(parser.parse_args(argv))
    main(name, lambda figures: run(figures, **options))


def parser_for(name: str, doc: str | None) -> argparse.ArgumentParser:
    """The option parser of drill `name`, described by the first line of its module docstring."""
    return argparse.ArgumentParser(prog=f"python -m drills {name}", description=(doc or "").splitlines()[0])


def main(name: str, drill: Callable[[dict[str, Any]], object]) -> None:
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
