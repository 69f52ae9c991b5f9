"""The README's two generated tables: the environment variables (`settings.configuration_table`) and the resource
fields (`reference.resource_table`). Prints them; with `--write`, replaces the README's tables with them. The tests
`test_settings.py` and `test_reference.py` fail until the README matches."""

import sys
from pathlib import Path

from stage_e_dagster.reference import resource_table
from stage_e_dagster.settings import configuration_table

README = Path(__file__).resolve().parents[1] / "README.md"


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
