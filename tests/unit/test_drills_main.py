"""`python -m drills`: `--help` says what it runs and exits 0; an unknown drill exits non-zero with the usage."""

from __future__ import annotations

import importlib

import pytest

from drills.__main__ import DRILLS, main


def test_help_names_every_drill_and_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    main(["--help"])
    out = capsys.readouterr().out
    assert all(name in out for name in DRILLS)
    assert all(callable(importlib.import_module(f"drills.{module}").main) for module in DRILLS.values())


@pytest.mark.parametrize("argv", [[], ["no-such-drill"]])
def test_no_drill_or_an_unknown_one_exits_non_zero_with_the_usage(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as ended:
        main(argv)
    assert ended.value.code != 0 and "usage: python -m drills" in str(ended.value.code)
