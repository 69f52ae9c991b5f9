"""A process identity (`host.process_owner`) read back: the process it names while that one runs here, nothing for
a reused pid, another host or an unreadable owner."""

from __future__ import annotations

import os

from stage_e_dagster.host import host_id, owner_is_gone, owner_process, process_owner


def test_an_owner_names_its_running_process_and_nothing_else():
    mine = process_owner()
    assert owner_process(mine).pid == os.getpid() and not owner_is_gone(mine)
    reused = f"{host_id()}/{os.getpid()}/0.00"  # same pid, another start time
    assert owner_process(reused) is None and owner_is_gone(reused)
    elsewhere = mine.replace(host_id(), "another-host", 1)
    assert owner_process(elsewhere) is None and not owner_is_gone(elsewhere)
    for unreadable in (None, "", "a/b", "h/not-a-pid/1.00"):
        assert owner_process(unreadable) is None and not owner_is_gone(unreadable)
