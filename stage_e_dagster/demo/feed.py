"""The demo's inbox feeder: copies scans into a watched source directory in waves, so the stream is seen working.

Each wave copies the next `wave` files not yet in the inbox (same relative paths), each written under a hidden
temporary name and renamed into place, so the `source_inbox` sensor never sees half a file. Files already there are
left alone, so a second `make demo` finds nothing to copy and reuses what the first one did.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from stage_e_dagster.domain.scan_files import FoundFile, find_images


def pending(source: Path, inbox: Path) -> list[str]:
    """Relative paths of the images under `source` not yet in `inbox`, in a stable order."""
    return [item.identifier for item in find_images(source)
            if isinstance(item, FoundFile) and not (inbox / item.identifier).exists()]


def copy_into(source: Path, inbox: Path, identifiers: list[str]) -> int:
    """Copy `identifiers` from `source` into `inbox` atomically (temporary name, then rename); how many."""
    for identifier in identifiers:
        target = inbox / identifier
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f".{target.name}.part")
        shutil.copyfile(source / identifier, partial)
        partial.replace(target)
    return len(identifiers)


@dataclass
class Feeder:
    """Copies `source`'s images into `inbox`, `wave` files every `every` seconds, in a background thread."""

    source: Path
    inbox: Path
    wave: int = 50
    every: float = 20.0
    say: Callable[[str], None] = lambda message: None
    copied: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> None:
        self.inbox.mkdir(parents=True, exist_ok=True)
        self._thread = threading.Thread(target=self._run, name="demo-feeder", daemon=True)
        self._thread.start()

    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def _run(self) -> None:
        todo = pending(self.source, self.inbox)
        if not todo:
            self.say(f"feeder: every scan is already in {self.inbox}")
            return
        waves = -(-len(todo) // self.wave)
        for index in range(waves):
            if self._stop.is_set():
                return
            batch = todo[index * self.wave:(index + 1) * self.wave]
            self.copied += copy_into(self.source, self.inbox, batch)
            self.say(f"feeder: wave {index + 1}/{waves}: {len(batch)} scans into {self.inbox} "
                     f"({self.copied}/{len(todo)})")
            if index + 1 < waves and self._stop.wait(self.every):
                return
