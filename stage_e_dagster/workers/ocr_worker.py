"""One OCR worker process: it takes its own OCR slot, then extracts evidence for the cards it is sent.

Without a slot it exits at once, so the cap holds whatever starts workers; when its lock session ends while it
works (the server then gives the slot to others) it exits at once with `EXIT_SLOT_LOST`. It dies with its owner:
the kernel sends SIGKILL when the parent (the forkserver) dies (PR_SET_PDEATHSIG), and a watchdog thread exits the
moment the owning step process ends (a pidfd), so a killed run leaves no orphaned OCR process holding a slot.
"""

from __future__ import annotations

import ctypes
import os
import select
import signal
import threading
import time
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stage_e_dagster.db.slots.cap import SlotCap
from stage_e_dagster.domain.evidence.extract import extract_evidence
from stage_e_dagster.domain.evidence.model import Evidence, EvidenceSkip
from stage_e_dagster.domain.evidence.ocr import make_engine
from stage_e_dagster.domain.evidence.ocr_rapid import make_rescue_engine
from stage_e_dagster.domain.evidence.read_catalog import ReadCatalog
from stage_e_dagster.domain.scan_files import read_scan, sha256_of

if TYPE_CHECKING:
    import multiprocessing as mp

PR_SET_PDEATHSIG = 1
EXIT_SLOT_LOST = 75  # the worker's lock session ended, freeing its slot to others: it stopped OCR at once


@dataclass(frozen=True)
class Task:
    """Extract `extractors` for one card from the file at `path` (inside the source directory `root`), expected
    to hash to `content_sha256`."""

    card_id: int
    path: str
    content_sha256: str
    extractors: frozenset[str]
    name: str | None = None  # the card's name, which the reader checks a reading against
    root: str = ""  # the source directory the file must stay inside; "" only in tests: the file's own directory


@dataclass(frozen=True)
class TaskResult:
    card_id: int
    content_sha256: str
    outcome: Evidence | EvidenceSkip
    seconds: float


@dataclass(frozen=True)
class PoolSettings:
    """How many workers to start, which OCR engine they use, and how each one takes its slot."""

    workers: int
    engine: str
    slots: dict[str, Any]  # OcrSlots fields, rebuilt inside each worker
    holder: str  # names the lock connection, e.g. the Dagster run id
    max_in_flight: int = 0  # 0 -> two per worker
    task_timeout_seconds: float = 120.0  # a card that takes longer is abandoned and its worker replaced
    max_replacements: int = 3  # workers replaced per batch before the batch gives up
    tessdata_prefix: Path | None = None  # searched first for OCR language data
    rescue: str = "none"  # the second engine for numbers Tesseract cannot read (`ocr_rapid.RESCUE_NAMES`)


def _die_with(owner_pid: int) -> None:
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except OSError:
        pass

    threading.Thread(target=_exit_with, args=(owner_pid,), daemon=True, name="owner-watchdog").start()


def _exit_with(owner_pid: int) -> None:
    """Exit this process the moment `owner_pid` exits: a pidfd becomes readable when its process ends (even while
    it waits, a zombie, for its parent to reap it), so the slot's lock connection closes at once. Where pidfds
    are missing, poll the pid twice a second instead."""
    try:
        pidfd = os.pidfd_open(owner_pid)
    except ProcessLookupError:
        os._exit(3)
    except (AttributeError, OSError):
        pidfd = None
    if pidfd is not None:
        select.select([pidfd], [], [])
        os._exit(3)
    while True:
        try:
            os.kill(owner_pid, 0)
        except ProcessLookupError:
            os._exit(3)
        except PermissionError:
            pass
        time.sleep(0.5)


def process_task(task: Task, engine: Any, catalog: ReadCatalog, executor: Executor | None = None,
                 rescue: Any = None) -> TaskResult:
    """Read the file, check it is the bytes the card was registered with, and extract (with the catalogue's
    knowledge and the card's name, one confirmed reading is enough; `executor` runs the pixel analysis beside the
    OCR). Never raises."""
    started = time.perf_counter()
    data = read_scan(task.root or str(Path(task.path).parent), task.path)
    if isinstance(data, EvidenceSkip):
        outcome: Evidence | EvidenceSkip = data
    else:
        actual = sha256_of(data)
        if actual != task.content_sha256:
            outcome = EvidenceSkip("content-changed", {"expected": task.content_sha256, "actual": actual})
        else:
            try:
                outcome = extract_evidence(data, known_set_codes=catalog.set_codes, engine=engine,
                                           only=task.extractors, catalog=catalog, name=task.name,
                                           executor=executor, rescue=rescue)
            except Exception as err:  # noqa: BLE001 - a bug on one image must not end the batch
                outcome = EvidenceSkip("extraction-error", {"error": f"{type(err).__name__}: {err}"})
    return TaskResult(task.card_id, task.content_sha256, outcome, time.perf_counter() - started)


def _exit_slot_lost(results: mp.Queue) -> None:
    """Stop OCR now: flush the results already sent (the parent requeues the cards in flight) and exit."""
    results.close()
    results.join_thread()
    os._exit(EXIT_SLOT_LOST)


def worker_main(index: int, settings: PoolSettings, catalog: ReadCatalog, owner_pid: int,
                 tasks: mp.Queue, results: mp.Queue) -> None:
    _die_with(owner_pid)
    slots = SlotCap.from_worker_config(settings.slots)
    with slots.acquire(1, holder=f"{settings.holder} w{index}", on_lost=lambda: _exit_slot_lost(results)) as held:
        if not held:
            results.put(("no-slot", index, None))
            return
        try:
            engine = make_engine(settings.engine, settings.tessdata_prefix)
        except Exception as err:  # noqa: BLE001 - reported to the parent, which fails the batch clearly
            results.put(("error", index, f"OCR engine {settings.engine!r} unavailable: {err}"))
            return
        try:
            rescue = make_rescue_engine(settings.rescue)
        except Exception as err:  # noqa: BLE001 - reported to the parent, which fails the batch clearly
            results.put(("error", index, f"rescue OCR engine {settings.rescue!r} unavailable: {err}"))
            return
        results.put(("ready", index, held[0]))
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="pixels") as pixels:
            while (task := tasks.get()) is not None:
                results.put(("result", index, process_task(task, engine, catalog, pixels, rescue)))


