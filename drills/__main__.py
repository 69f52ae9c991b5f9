"""`python -m drills NAME [size options]`: one drill on a throwaway home at the size its options give (`--help`
lists them; the defaults are the bigger size a drill script runs), ending with its one verdict line."""

from __future__ import annotations

import importlib
import sys

DRILLS = {"crash": "crash", "governor": "governor", "hostile": "hostile", "hostile-remote": "hostile_remote",
          "live-daemon": "live_daemon", "outage": "outage", "race": "race", "remote": "remote", "soak": "soak"}


USAGE = (f"usage: python -m drills {{{','.join(DRILLS)}}} [size options]\n"
         "One drill on a throwaway home, ending with its one verdict line; `python -m drills NAME --help` lists that "
         "drill's size options.")


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] in (["--help"], ["-h"]):
        print(USAGE)
        return
    if not argv or argv[0] not in DRILLS:
        sys.exit(USAGE)
    importlib.import_module(f"drills.{DRILLS[argv[0]]}").main(argv[1:])


if __name__ == "__main__":
    main()
