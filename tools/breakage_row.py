"""One row of the breakage table (`tools/breakages.py`): a deliberate breakage of one file and the tests that must
catch it. The rows are in `breakage_rows` and, for Stage C's evidence, `breakage_rows_evidence`."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Breakage:
    """A named breakage: text replacements in one file, and the tests (pytest node ids) that must catch it."""

    name: str
    path: str
    edits: tuple[tuple[str, str], ...]
    tests: tuple[str, ...]
    what: str = ""
    """What the edit does, for the documented table's "where" column (after the file's name); optional."""
