"""A synthetic Stage D batch in memory: cards with 1-6 candidate printings and evidence in the mix a real batch shows
(set code and number, number only, shared numbers needing the symbol tie-break, truncated, unreadable, misread set
codes), for the Stage D benchmarks (`bench/stage_d_decide.py`, `bench/stage_d.py`)."""

from __future__ import annotations

import random
from datetime import date

from stage_e_dagster.domain.catalog import CardRef, ExpansionRef, PrintingRef
from stage_e_dagster.domain.evidence.model import Evidence

VERSIONS = {"geometry": "1", "collector": "1", "legal": "1", "hashes": "1", "quality": "1"}
Case = tuple[CardRef, Evidence | None, list[PrintingRef]]


def _flip(value: int, bits: int, rng: random.Random) -> int:
    """A signed 64-bit hash with `bits` random bits of `value` flipped."""
    value &= (1 << 64) - 1
    for bit in rng.sample(range(64), bits):
        value ^= 1 << bit
    return value - (1 << 64) if value >= 1 << 63 else value


def build_expansions(rng: random.Random, count: int = 300) -> dict[str, ExpansionRef]:
    """Known sets, most with a reference symbol hash."""
    expansions = {}
    for index in range(count):
        code = f"s{index:03d}"
        symbol = _flip(rng.getrandbits(64), 0, rng) if rng.random() < 0.9 else None
        expansions[code] = ExpansionRef(code, date(1993 + index * 30 // count, 6, 1), symbol)
    return expansions


def build_batch(size: int, rng: random.Random, expansions: dict[str, ExpansionRef]) -> list[Case]:
    """`size` cards with candidate lists of 1-6 printings and a realistic mix of evidence."""
    codes = list(expansions)
    cases: list[Case] = []
    next_id = 1
    for card_id in range(size):
        name = f"Card {card_id}"
        printings = []
        shared = str(rng.randint(1, 300))
        for set_code in rng.sample(codes, rng.randint(1, 6)):
            number = shared if rng.random() < 0.3 else f"{rng.randint(1, 350)}{rng.choice(['', '', 'a', '★'])}"
            printings.append(PrintingRef(next_id, f"sf-{next_id}", name, set_code, number, border_color="black"))
            next_id += 1
        truth = rng.choice(printings)
        expansion = expansions[truth.set_code]
        symbol = _flip(expansion.symbol_phash, rng.randint(0, 8), rng) if expansion.symbol_phash is not None else None
        roll = rng.random()
        set_code: str | None = truth.set_code
        number: str | None = truth.collector_number.upper().zfill(3)
        if roll < 0.35:
            set_code = None  # older frame, number only
        elif roll < 0.40:
            set_code = "zzz"  # OCR misread that snapped to nothing
        elif roll < 0.45:
            number = None
        year = (expansion.released_at.year if expansion.released_at else 2000) - rng.choice([0, 0, 0, 1, 3])
        evidence: Evidence | None = Evidence(
            collector_number=number, set_code=set_code, set_code_raw=(set_code or "").upper() or None,
            copyright_year=year, symbol_phash=symbol, border_color="black", truncated=rng.random() < 0.03,
            extractor_versions=dict(VERSIONS),
        )
        if rng.random() < 0.02:
            evidence = None
        hint = truth.set_code if rng.random() < 0.5 else rng.choice(codes)
        cases.append((CardRef(card_id, name, hint if rng.random() < 0.4 else None), evidence, printings))
    return cases
