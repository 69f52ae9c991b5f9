"""Writes a demo data set: a catalogue, one reference symbol per set, and contributor-style card scans.

Layout of `out_dir`: `catalog.json` (JSON array of card objects), `sets.json` (a Scryfall sets list with each set's
printed size), `symbols/<set code>.png`, `scans/NNN/<file>`
(100 scans per subdirectory) and `manifest.json` mapping each scan's path relative to `scans/` to its truth:
{"scryfall_id", "long_side", "bleed", "degraded"}; with `kinds`, also its "kind" (`demo.forms`), a card back's
"scryfall_id" being null.
"""

from __future__ import annotations

import json
import os
import random
import re
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from stage_e_dagster.demo import forms
from stage_e_dagster.demo.catalog import generate_catalog, write_catalog, write_sets
from stage_e_dagster.demo.render import Degradation, front_name, render_scan
from stage_e_dagster.demo.symbols import render_set_symbol

SCANS_PER_DIR = 100
_UNSAFE = re.compile(r'[\\/:*?"<>|\x00-\x1f]+')
_PARALLEL_FROM = 24  # render in worker processes only for runs at least this big


@dataclass(frozen=True)
class GenerateSummary:
    """What `generate` wrote."""

    out_dir: Path
    printings: int
    sets: int
    scans: int
    degraded: int
    png: int
    seconds: float

    def line(self) -> str:
        """A one-line human summary."""
        return (
            f"wrote {self.printings} printings in {self.sets} sets and {self.scans} scans "
            f"({self.degraded} degraded, {self.png} png) to {self.out_dir} in {self.seconds:.1f}s"
        )


@dataclass(frozen=True)
class _Job:
    card: dict[str, Any] | None  # None: a card back
    path: Path
    long_side: int
    bleed: bool
    seed: int
    degradation: Degradation | None
    kind: str = "card"
    truth: dict[str, Any] | None = None  # the printing shown, when `card` is drawn differently (language, art)


def safe_file_stem(name: str) -> str:
    """A filesystem-safe file stem for a card name: the front face of "A // B", unsafe characters replaced."""
    front = name.split(" // ")[0]
    return _UNSAFE.sub("-", front).strip(" .") or "card"


def _hint(card: dict[str, Any], rng: random.Random, set_codes: list[str], reprints: list[str]) -> tuple[str, str]:
    """(hint group, trailing group) for a file name: mostly the right set, sometimes none or a wrong one.

    A wrong hint prefers another set the same name was printed in (the mistake a contributor makes)."""
    roll = rng.random()
    right = f" [{str(card['set']).upper()}]"
    if roll < 0.55:
        return right, ""
    if roll < 0.75:
        return "", ""
    if roll < 0.85:
        others = [c for c in reprints if c != card["set"]] or [c for c in set_codes if c != card["set"]]
        wrong = rng.choice(others or [str(card["set"])])
        return f" [{wrong.upper()}]", ""
    return right, rng.choice((" (1)", " (2)", " (copy)", " (proxy)", " - Copy"))


def _plan(catalog: list[dict[str, Any]], cards: int, seed: int, degraded_fraction: float, scans: Path) -> list[_Job]:
    rng = random.Random(f"scans:{seed}")
    set_codes = sorted({str(c["set"]) for c in catalog})
    sets_of: dict[str, list[str]] = {}
    for printing in catalog:
        sets_of.setdefault(str(printing["name"]), []).append(str(printing["set"]))
    jobs: list[_Job] = []
    taken: set[Path] = set()
    for index in range(cards):
        card = rng.choice(catalog)
        long_side = rng.choice((1040, 1680))
        bleed = rng.random() < 0.5
        degradation = Degradation.random(rng) if rng.random() < degraded_fraction else None
        ext = ".png" if rng.random() < 0.15 else ".jpg"
        hint, trailing = _hint(card, rng, set_codes, sets_of[str(card["name"])])
        stem = f"{safe_file_stem(front_name(card))}{hint}{trailing}"
        folder = scans / f"{index // SCANS_PER_DIR:03d}"
        path, n = folder / f"{stem}{ext}", 1
        while path in taken:
            path, n = folder / f"{stem} ({n}){ext}", n + 1
        taken.add(path)
        jobs.append(_Job(card, path, long_side, bleed, rng.getrandbits(31), degradation))
    return jobs


def _plan_kinds(catalog: list[dict[str, Any]], cards: int, seed: int, degraded_fraction: float,
                scans: Path) -> list[_Job]:
    """Scans of every kind in `forms.KIND_SHARES`, under the source-relative paths `forms.plan_kinds` names
    (a `tokens/` or `cardbacks/` folder sits under each numbered directory)."""
    rng = random.Random(f"scans:{seed}")
    jobs: list[_Job] = []
    for index, planned in enumerate(forms.plan_kinds(catalog, cards, seed)):
        long_side = rng.choice((1040, 1680))
        bleed = rng.random() < 0.5
        degradation = Degradation.random(rng) if rng.random() < degraded_fraction else None
        parent, _, name = planned.path.rpartition("/")
        folder = scans / f"{index // SCANS_PER_DIR:03d}" / parent
        stem, ext = name.rsplit(".", 1)
        path = folder / f"{_UNSAFE.sub('-', stem).strip(' .') or 'card'} ({index}).{ext}"
        jobs.append(_Job(planned.drawn, path, long_side, bleed, rng.getrandbits(31), degradation, planned.kind,
                         planned.card))
    return jobs


def _render_job(job: _Job) -> None:
    if job.card is None:
        img = forms.render_card_back(job.long_side, job.bleed, job.seed, job.degradation)
    else:
        img = render_scan(job.card, long_side=job.long_side, bleed=job.bleed, seed=job.seed,
                          degradation=job.degradation)
    if job.path.suffix == ".png":
        img.save(job.path, "PNG", compress_level=1)
    else:
        img.save(job.path, "JPEG", quality=92)


def generate(
    out_dir: Path,
    printings: int,
    cards: int,
    seed: int = 0,
    degraded_fraction: float = 0.3,
    progress: Callable[[int], None] | None = None,
    workers: int | None = None,
    kinds: bool = False,
) -> GenerateSummary:
    """Write catalogue, symbols, `cards` scans and the manifest under `out_dir`; `progress(n)` after n more scans.

    `workers` (default: the CPU count, at most 4) render scans in parallel processes for larger runs. With `kinds`,
    the catalogue gains the printings of `demo.forms` (old sets without collector numbers, token sets, suffixed and
    prefixed numbers) and the scans are drawn by kind in `forms.KIND_SHARES`: tokens, card backs, custom-art and
    foreign-tagged files, suffixed numbers, numberless cards and language markers besides plain cards.
    """
    started = time.monotonic()
    out_dir = Path(out_dir)
    catalog = generate_catalog(printings, seed)
    if kinds:
        catalog = forms.extend_catalog(catalog, seed)
    if not catalog and cards:
        raise ValueError("cannot render scans from an empty catalogue")
    scans = out_dir / "scans"
    symbols = out_dir / "symbols"
    symbols.mkdir(parents=True, exist_ok=True)
    scans.mkdir(parents=True, exist_ok=True)
    write_catalog(out_dir / "catalog.json", catalog)
    write_sets(out_dir / "sets.json", catalog)
    set_codes = sorted({str(c["set"]) for c in catalog})
    for code in set_codes:
        render_set_symbol(code).save(symbols / f"{code}.png")
    jobs = (_plan_kinds if kinds else _plan)(catalog, cards, seed, degraded_fraction, scans)
    for folder in sorted({job.path.parent for job in jobs}):
        folder.mkdir(parents=True, exist_ok=True)
    workers = workers or min(4, os.cpu_count() or 1)
    if workers > 1 and len(jobs) >= _PARALLEL_FROM:
        with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
            for _ in pool.map(_render_job, jobs, chunksize=4):
                if progress:
                    progress(1)
    else:
        for job in jobs:
            _render_job(job)
            if progress:
                progress(1)
    manifest = {
        job.path.relative_to(scans).as_posix(): {
            "scryfall_id": (job.truth or job.card or {}).get("id"),
            "long_side": job.long_side,
            "bleed": job.bleed,
            "degraded": job.degradation is not None,
            **({"kind": job.kind} if kinds else {}),
        }
        for job in jobs
    }
    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False), encoding="utf-8")
    return GenerateSummary(
        out_dir=out_dir,
        printings=len(catalog),
        sets=len(set_codes),
        scans=len(jobs),
        degraded=sum(job.degradation is not None for job in jobs),
        png=sum(job.path.suffix == ".png" for job in jobs),
        seconds=time.monotonic() - started,
    )
