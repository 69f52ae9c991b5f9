"""The Stage C bench's readers and how they are timed: the project's `extract_evidence` (with or without the
catalogue, with or without the pixel thread) and the naive baseline, each counting its OCR calls, taking turns card
by card (`bench/stage_c.py` runs them)."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from PIL import Image
from stage_c_sets import Scan, World

from stage_e_dagster.domain.evidence.extract import extract_evidence
from stage_e_dagster.domain.evidence.load import load_scan
from stage_e_dagster.domain.evidence.model import Evidence, EvidenceSkip
from stage_e_dagster.domain.kinds import name_and_hint

_NAIVE_NUMBER = re.compile(r"(\d{1,4})\s*/\s*\d{1,4}")


class CountingEngine:
    """An OCR engine that counts its calls (the bench's figure for OCR calls per card): its reads and, for an
    engine that gives them (`line_verify`), its character probabilities of a line."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.name, self.calls = inner, inner.name, 0
        if hasattr(inner, "char_probs"):
            self.char_probs = self._char_probs

    def read(self, image: Image.Image, psm: int = 6, whitelist: str | None = None) -> str:
        self.calls += 1
        return self.inner.read(image, psm, whitelist)

    def _char_probs(self, image: Image.Image) -> Any:
        self.calls += 1
        return self.inner.char_probs(image)


def _jpeg(scan: Scan) -> bytes:
    return scan.plan.jpeg()


def render(plans: list[Scan], workers: int = 2) -> list[bytes]:
    with ProcessPoolExecutor(workers) as pool:
        return list(pool.map(_jpeg, plans, chunksize=8))


@dataclass
class Run:
    """One reader over one set: wall and CPU seconds per card, OCR calls, seconds per extractor, results."""

    label: str
    seconds: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    calls: int = 0
    timings: dict[str, float] = field(default_factory=dict)
    evidence: list[Evidence] = field(default_factory=list)
    numbers: list[str | None] = field(default_factory=list)

    @property
    def ms_per_card(self) -> float:
        return 1000 * sum(self.seconds) / max(1, len(self.seconds))

    @property
    def cpu_ms_per_card(self) -> float:
        return 1000 * sum(self.cpu) / max(1, len(self.cpu))


Reader = Callable[[Scan, bytes, Run], None]


def project_reader(world: World, engine: CountingEngine, escalation: CountingEngine | None,
                   with_catalog: bool, pixels: Executor | None = None, rescue: CountingEngine | None = None) -> Reader:
    """`extract_evidence` as a worker runs it, with the catalogue and the card's name or with set codes only;
    with `pixels`, the pixel analysis runs on that executor's thread beside the OCR, as in an OCR worker; with
    `rescue`, the second engine reads the numbers Tesseract could not (a worker's default)."""

    def read(scan: Scan, blob: bytes, run: Run) -> None:
        found = extract_evidence(blob, known_set_codes=world.known, engine=engine, escalation=escalation,
                                 catalog=world.read_catalog if with_catalog else None,
                                 name=card_name(scan) if with_catalog else None, timings=run.timings,
                                 executor=pixels, rescue=rescue)
        assert isinstance(found, Evidence)
        run.evidence.append(found)

    return read


def card_name(scan: Scan) -> str:
    """The card name a worker is given: the file name's (by the source conventions) where the scan has a path."""
    return name_and_hint(scan.path)[0] if scan.path else scan.card["name"]


def naive_reader(engine: CountingEngine) -> Reader:
    """Decode, crop the bottom-left corner, one plain read; the number is the first "n/total" in the text."""

    def read(scan: Scan, blob: bytes, run: Run) -> None:
        loaded = load_scan(blob)
        assert not isinstance(loaded, EvidenceSkip)
        img = loaded.image
        corner = img.crop((0, round(img.height * 0.86), round(img.width * 0.45), img.height)).convert("L")
        match = _NAIVE_NUMBER.search(engine.read(corner, psm=6))
        run.numbers.append(match.group(1).lstrip("0") if match else None)

    return read


def measure(readers: dict[str, Reader], plans: list[Scan], data: list[bytes],
            engines: list[CountingEngine]) -> dict[str, Run]:
    """Every reader on every card, card by card in rotating order, so that a shared host's changing load weighs
    on each reader alike; OCR calls are counted per reader."""
    runs = {label: Run(label) for label in readers}
    labels = list(readers)
    for index, (scan, blob) in enumerate(zip(plans, data, strict=True)):
        shift = index % len(labels)
        for label in labels[shift:] + labels[:shift]:
            before = sum(engine.calls for engine in engines)
            wall, cpu = time.perf_counter(), time.process_time()
            readers[label](scan, blob, runs[label])
            runs[label].seconds.append(time.perf_counter() - wall)
            runs[label].cpu.append(time.process_time() - cpu)
            runs[label].calls += sum(engine.calls for engine in engines) - before
    return runs
