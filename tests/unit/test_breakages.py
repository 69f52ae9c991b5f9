"""The breakage table stays true without running it: every row's edit applies to the tree as it is (each text to
break occurs exactly once in its file, and the tests it names exist), so moving code that a row breaks fails
`make test`, not only `make breakages`; and docs/testing.md's table is the one made from the rows."""

from __future__ import annotations

import dataclasses

import pytest

from tools import breakages
from tools.breakages import BREAKAGES, DOC, Breakage, stale, with_table


@pytest.mark.parametrize("row", BREAKAGES, ids=[b.name for b in BREAKAGES])
def test_every_rows_edit_applies_to_the_tree(row: Breakage) -> None:
    assert stale(row) == []


def test_the_documented_table_is_made_from_the_rows() -> None:
    doc = DOC.read_text(encoding="utf-8")
    assert with_table(doc) == doc, "regenerate it: python tools/breakages.py --write"
    assert len({b.name for b in BREAKAGES}) == len(BREAKAGES), "two rows share a name"


def test_a_row_that_no_longer_applies_stops_the_tool_naming_the_row(monkeypatch, capsys) -> None:
    moved = dataclasses.replace(BREAKAGES[0], name="a row whose code moved",
                                edits=(("text that is nowhere in the file", "x"),))
    gone = dataclasses.replace(BREAKAGES[0], name="a row whose test was renamed",
                               tests=(f"{BREAKAGES[0].tests[0].split('::')[0]}::test_that_does_not_exist",))
    monkeypatch.setattr(breakages, "BREAKAGES", (*BREAKAGES, moved, gone))
    monkeypatch.setattr(breakages, "copy_tree", lambda target: pytest.fail("a stale row must stop it before the copy"))
    with pytest.raises(SystemExit) as ended:
        breakages.main(["a row"])
    assert ended.value.code != 0
    err = capsys.readouterr().err
    assert "'a row whose code moved'" in err and "found 0 times" in err
    assert "'a row whose test was renamed'" in err and "test_that_does_not_exist does not exist" in err
