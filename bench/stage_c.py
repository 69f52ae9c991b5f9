"""Stage C speed: cards per second per worker on generated 1200x1680 scans, tesserocr vs pytesseract.

Both engines run the full extraction (load, geometry, collector and legal OCR, hashes, quality) over the same
scans in this one process, one after the other, so their ratio is measured side by side. Prints the figures;
asserts nothing. Target: at least 10 cards/s per worker with tesserocr (the replaced system: 540-690 ms/card).
Usage: python bench/stage_c.py [--cards N]
"""

from __future__ import annotations

import argparse
import io
import os
import random
import statistics
import time

os.environ.setdefault("OMP_THREAD_LIMIT", "1")

from stage_e_dagster.demo.catalog import generate_catalog  # noqa: E402
from stage_e_dagster.demo.render import Degradation, render_scan  # noqa: E402
from stage_e_dagster.domain.evidence.extract import extract_evidence  # noqa: E402
from stage_e_dagster.domain.evidence.model import Evidence  # noqa: E402
from stage_e_dagster.domain.evidence.ocr import OcrUnavailableError, make_engine  # noqa: E402


def scans(count: int, seed: int = 5) -> tuple[list[tuple[bytes, dict]], set[str]]:
    catalogue = generate_catalog(max(200, count), seed=seed)
    rng = random.Random(seed)
    out = []
    for i in range(count):
        card = catalogue[rng.randrange(len(catalogue))]
        degradation = Degradation.random(rng) if i % 3 == 0 else None
        img = render_scan(card, long_side=1680, bleed=bool(i % 2), seed=i, degradation=degradation)
        buf = io.BytesIO()
        img.save(buf, format="JPEG", quality=90)
        out.append((buf.getvalue(), card))
    return out, {c["set"] for c in catalogue}


def measure(engine_name: str, data: list[tuple[bytes, dict]], known: set[str]) -> dict | None:
    try:
        engine = make_engine(engine_name)
    except OcrUnavailableError as err:
        print(f"{engine_name:12s} unavailable: {err}")
        return None
    for scan, _card in data[:2]:
        extract_evidence(scan, known_set_codes=known, engine=engine)  # warm-up
    times, right = [], 0
    for scan, card in data:
        started = time.perf_counter()
        evidence = extract_evidence(scan, known_set_codes=known, engine=engine)
        times.append(time.perf_counter() - started)
        if isinstance(evidence, Evidence) and evidence.collector_number == card["collector_number"].lstrip("0"):
            right += 1
    total = sum(times)
    return {"engine": engine_name, "cards_per_s": len(data) / total, "p50_ms": statistics.median(times) * 1e3,
            "p95_ms": sorted(times)[int(0.95 * (len(times) - 1))] * 1e3, "number_right": right / len(data)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=60)
    args = parser.parse_args()
    data, known = scans(args.cards)
    print(f"stage C bench: {len(data)} scans at 1200x1680 / 1236x1680 JPEG, one worker, OMP_THREAD_LIMIT=1")
    results = [r for name in ("tesserocr", "pytesseract") if (r := measure(name, data, known))]
    for r in results:
        print(f"{r['engine']:12s} {r['cards_per_s']:6.1f} cards/s per worker   p50 {r['p50_ms']:6.1f} ms   "
              f"p95 {r['p95_ms']:6.1f} ms   collector number right {r['number_right']:.0%}")
    if len(results) == 2:
        print(f"ratio tesserocr/pytesseract: {results[0]['cards_per_s'] / results[1]['cards_per_s']:.2f}x")
    if results and results[0]["engine"] == "tesserocr":
        verdict = "meets" if results[0]["cards_per_s"] >= 10 else "misses"
        print(f"target >= 10 cards/s per worker with tesserocr: {verdict}")


if __name__ == "__main__":
    main()
