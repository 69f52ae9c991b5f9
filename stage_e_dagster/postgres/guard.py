"""The guardian of an embedded Postgres server: it stops the server when the process that owns it dies.

`python -m stage_e_dagster.postgres.guard OWNER_PID DATA_DIR [REMOVE_DIR]` waits (on a pidfd, else by polling)
until OWNER_PID ends, then shuts down the server in DATA_DIR immediately and deletes REMOVE_DIR. It runs in a
session of its own (see `EmbeddedPostgres.guard`), so a SIGKILL of the owner, or of the owner's process group,
cannot take the guardian first: a throwaway server never outlives the test session or drill that started it.
"""

from __future__ import annotations

import os
import select
import shutil
import sys
import time
from pathlib import Path


def wait_for_exit(pid: int) -> None:
    """Return once process `pid` has ended."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    except (AttributeError, OSError):
        while _alive(pid):
            time.sleep(0.5)
        return
    try:
        select.select([fd], [], [])
    finally:
        os.close(fd)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def main(argv: list[str]) -> int:
    owner, data_dir = int(argv[0]), Path(argv[1])
    remove = Path(argv[2]) if len(argv) > 2 else None
    wait_for_exit(owner)
    from stage_e_dagster.postgres.server import EmbeddedPostgres

    EmbeddedPostgres(data_dir).stop_now()
    if remove is not None:
        shutil.rmtree(remove, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
