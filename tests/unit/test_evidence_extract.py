"""End-to-end extraction on generated scans: collector accuracy (clean and degraded), geometry, legal line,
and `only` for carry-forward. Prints every failure and the measured time per card."""

from __future__ import annotations

import io
import random
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import fields
from datetime import date

import pytest
from PIL import Image

from stage_e_dagster.demo.catalog import generate_catalog
from stage_e_dagster.demo.hard import read_catalog_of
from stage_e_dagster.demo.info import layout_of_card
from stage_e_dagster.demo.render import Degradation, legal_marker, legal_text, render_scan
from stage_e_dagster.domain.evidence.extract import EXTRACTOR_VERSIONS, extract_evidence, stale_extractors
from stage_e_dagster.domain.evidence.model import Evidence
from stage_e_dagster.domain.evidence.ocr import OcrEngine, TesserocrEngine
from stage_e_dagster.domain.evidence.parse import normalise_collector_number
from stage_e_dagster.domain.printed_lines import CODE_LAYOUTS, NUMBERLESS

CATALOG_SEEDS = (21, 2)  # 12 sets between them, one-edit twin codes, 5-letter codes, pre-2015 frames


@pytest.fixture(scope="module")
def engine() -> OcrEngine:
    return TesserocrEngine()


@pytest.fixture(scope="module")
def catalogs() -> list[tuple[list[dict], set[str]]]:
    out = []
    for seed in CATALOG_SEEDS:
        cards = generate_catalog(600, seed=seed)
        out.append((cards, {c["set"] for c in cards}))
    return out


def jpeg(img: Image.Image, quality: int = 95) -> bytes:
    buffer = io.BytesIO()
    img.save(buffer, "JPEG", quality=quality)
    return buffer.getvalue()


def expected(card: dict) -> tuple[str | None, str | None]:
    """(normalised collector number, set code) a reader should find: only the modern layouts print a set code, and
    the cards from before Exodus no number."""
    layout = layout_of_card(card)
    number = None if layout == NUMBERLESS else normalise_collector_number(card["collector_number"])
    return number, card["set"] if layout in CODE_LAYOUTS else None


def found_key(found: Evidence) -> tuple[str | None, str | None]:
    return (normalise_collector_number(found.collector_number) or None), found.set_code


def sample(catalogs: list[tuple[list[dict], set[str]]], per_catalog: int, salt: int) -> list[tuple[dict, set[str]]]:
    picked = []
    for index, (cards, known) in enumerate(catalogs):
        rng = random.Random(salt * 100 + index)
        modern = [c for c in cards if c["frame"] == "2015"]
        old = [c for c in cards if c["frame"] != "2015"]
        n_old = per_catalog // 3
        picked += [(c, known) for c in rng.sample(old, n_old) + rng.sample(modern, per_catalog - n_old)]
    return picked


def run_accuracy(engine: OcrEngine, cases: list[tuple[dict, set[str]]], degraded: bool) -> tuple[float, list[str]]:
    failures: list[str] = []
    spent = 0.0
    for i, (card, known) in enumerate(cases):
        long_side, bleed = (1040, 1680)[i % 2], bool(i // 2 % 2)
        damage = Degradation.random(random.Random(1000 + i)) if degraded else None
        data = jpeg(render_scan(card, long_side=long_side, bleed=bleed, seed=i, degradation=damage))
        started = time.process_time()
        found = extract_evidence(data, known_set_codes=known, engine=engine, only={"collector", "geometry"})
        spent += time.process_time() - started
        assert isinstance(found, Evidence)
        assert found.bleed_class == ("bleed" if bleed else "trimmed")
        if found_key(found) != expected(card):
            failures.append(
                f"{card['set']} {card['collector_number']} frame={card['frame']} {long_side}px bleed={bleed} "
                f"{damage} -> {found.collector_number} {found.set_code} raw={found.collector_raw!r}"
            )
    rate = 1 - len(failures) / len(cases)
    kind = "degraded" if degraded else "clean"
    print(f"\n{kind}: {rate:.3f} of {len(cases)} exactly right; {spent / len(cases) * 1000:.1f} ms CPU per card "
          "(collector + geometry, load included)")
    for failure in failures:
        print("  FAIL", failure)
    return rate, failures


@pytest.mark.slow
def test_collector_accuracy_on_clean_scans(engine: OcrEngine, catalogs: list) -> None:
    rate, failures = run_accuracy(engine, sample(catalogs, 100, salt=1), degraded=False)
    assert rate >= 0.98, failures


@pytest.mark.slow
def test_collector_accuracy_on_degraded_scans(engine: OcrEngine, catalogs: list) -> None:
    rate, failures = run_accuracy(engine, sample(catalogs, 40, salt=2), degraded=True)
    assert rate >= 0.90, failures


def test_full_extraction_geometry_legal_and_speed(engine: OcrEngine, catalogs: list) -> None:
    cards, known = catalogs[0]
    borders = {"black", "white", "silver", "gold", "borderless"}
    chosen = [next(c for c in cards if c["border_color"] == b) for b in sorted(borders)]
    chosen += [c for c in cards if legal_marker(c)][:4] + random.Random(5).sample(cards, 11)
    spent, misses = 0.0, []
    for i, card in enumerate(chosen):
        bleed = bool(i % 2)
        data = jpeg(render_scan(card, long_side=1680, bleed=bleed, seed=i), quality=90)
        started = time.process_time()
        found = extract_evidence(data, known_set_codes=known, engine=engine, today=date(2026, 1, 1))
        spent += time.process_time() - started
        assert isinstance(found, Evidence)
        assert found.extractor_versions == EXTRACTOR_VERSIONS
        assert found.bleed_class == ("bleed" if bleed else "trimmed")
        assert found.width is not None and found.height == 1680 and found.aspect_ratio is not None
        assert found.art_phash is not None and found.symbol_phash is not None
        assert found.blur_variance is not None and found.blur_variance > 0 and found.entropy is not None
        assert found.truncated is False
        got = (found.border_color, found.copyright_year, found.proxy_marker, *found_key(found))
        border = "ambiguous" if card["border_color"] == "borderless" else card["border_color"]  # art to the edge
        year = int(card["released_at"][:4]) if legal_text(card) else None  # none printed before Legends
        want = (border, year, legal_marker(card) is not None if year else None, *expected(card))
        if got != want:
            misses.append(f"{card['set']} {card['collector_number']}: got {got} want {want} legal={found.legal_raw!r}")
    per_card = spent / len(chosen) * 1000
    print(f"\nfull extraction, 1680 px JPEG: {per_card:.1f} ms CPU per card; misses: {misses}")
    assert len(misses) <= 1, misses  # speed is bench/stage_c.py's business: no timing is asserted


def test_only_hashes_computes_only_hashes(engine: OcrEngine, catalogs: list) -> None:
    cards, known = catalogs[0]
    data = jpeg(render_scan(cards[0], long_side=1040))
    found = extract_evidence(data, known_set_codes=known, engine=engine, only={"hashes"})
    assert isinstance(found, Evidence)
    assert found.extractor_versions == {"hashes": EXTRACTOR_VERSIONS["hashes"]}
    set_fields = {f.name for f in fields(Evidence) if getattr(found, f.name) not in (None, False, {})}
    assert set_fields == {"art_phash", "symbol_phash", "extractor_versions"}
    full = extract_evidence(data, known_set_codes=known, engine=engine)
    assert isinstance(full, Evidence)
    assert (found.art_phash, found.symbol_phash) == (full.art_phash, full.symbol_phash)

    both = extract_evidence(data, known_set_codes=known, engine=engine, only=["quality", "legal"])
    assert isinstance(both, Evidence)
    assert set(both.extractor_versions) == {"quality", "legal"}
    assert both.collector_number is None and both.art_phash is None and both.copyright_year is not None
    with pytest.raises(ValueError, match="unknown extractors"):
        extract_evidence(data, known_set_codes=known, engine=engine, only={"colour"})


def test_stale_extractors() -> None:
    assert stale_extractors(None) == set(EXTRACTOR_VERSIONS)
    assert stale_extractors(dict(EXTRACTOR_VERSIONS)) == set()
    assert stale_extractors({**EXTRACTOR_VERSIONS, "hashes": "hashes-v0"}) == {"hashes"}
    assert stale_extractors({"geometry": EXTRACTOR_VERSIONS["geometry"]}) == set(EXTRACTOR_VERSIONS) - {"geometry"}


def test_with_the_catalogue_one_confirmed_read_is_enough_and_the_legal_line_is_skipped(
    engine: OcrEngine, catalogs: list
) -> None:
    cards, _ = catalogs[0]
    catalog = read_catalog_of(cards)
    modern = next(c for c in cards if c["frame"] == "2015" and c["border_color"] == "black")
    data = jpeg(render_scan(modern, long_side=1040))
    counter = CountingEngine(engine)
    timings: dict[str, float] = {}
    found = extract_evidence(data, known_set_codes=catalog.set_codes, engine=counter, catalog=catalog,
                             name=modern["name"], timings=timings)
    assert isinstance(found, Evidence)
    assert found_key(found) == expected(modern)
    assert counter.calls == 1  # settled by the catalogue: no second read, no legal line
    assert (found.legal_raw, found.copyright_year, found.proxy_marker) == (None, None, None)
    assert found.extractor_versions == EXTRACTOR_VERSIONS
    assert set(timings) == {"decode", "card", "geometry", "collector", "hashes", "quality"}

    counter.calls = 0
    unnamed = extract_evidence(data, known_set_codes=catalog.set_codes, engine=counter, catalog=catalog, name=None,
                               today=date(2026, 1, 1))
    assert isinstance(unnamed, Evidence)
    assert found_key(unnamed) == expected(modern)
    assert counter.calls >= 3  # two agreeing reads, then the legal line
    assert unnamed.copyright_year == int(modern["released_at"][:4])


class CountingEngine:
    """The real engine, counting its calls."""

    name = "tesserocr"

    def __init__(self, inner: OcrEngine) -> None:
        self.inner, self.calls = inner, 0

    def read(self, image: Image.Image, psm: int = 6, whitelist: str | None = None) -> str:
        self.calls += 1
        return self.inner.read(image, psm, whitelist)


def test_the_pixel_analysis_beside_the_ocr_gives_the_same_evidence(engine: OcrEngine, catalogs: list) -> None:
    """What an OCR worker does: geometry, hashes and quality on a second thread while this one reads the text."""
    cards, known = catalogs[0]
    catalog = read_catalog_of(cards)
    submitted: list[str] = []

    class Recording(ThreadPoolExecutor):
        def submit(self, fn, /, *args, **kwargs):
            submitted.append(fn.__name__)
            return super().submit(fn, *args, **kwargs)

    picked = random.Random(12).sample(cards, 6)
    with Recording(max_workers=1) as pixels:
        for i, card in enumerate(picked):
            degradation = Degradation.random(random.Random(50 + i)) if i % 2 else None
            data = jpeg(render_scan(card, long_side=1040 + 160 * i, bleed=bool(i % 3), seed=i,
                                    degradation=degradation))
            for only, name in ((None, card["name"]), (None, None), ({"hashes", "collector"}, card["name"])):
                kwargs = {"known_set_codes": known, "engine": engine, "only": only, "today": date(2026, 1, 1),
                          "catalog": catalog if name else None, "name": name}
                alone = extract_evidence(data, **kwargs)
                beside = extract_evidence(data, executor=pixels, **kwargs)
                assert isinstance(beside, Evidence) and beside == alone, (card["name"], only)
    assert len(submitted) == len(picked) * 3 and set(submitted) == {"_pixel_fields"}


def test_a_numberless_card_reads_its_credit_once_and_keeps_its_copyright_year(
    engine: OcrEngine, catalogs: list
) -> None:
    """A card whose only bottom line is "Illus. artist" has no year to find: the collector's reads of that line are
    its legal text, and the band is not read again. A numberless card that prints "© 1995 Wizards of the Coast" under
    its credit still gets its year."""
    cards, known = catalogs[0]
    dated = [c for c in cards if layout_of_card(c) == NUMBERLESS][:8]
    credit_only = [{**c, "released_at": "1993-12-01"} for c in dated]  # before Legends: no copyright year
    assert all(legal_text(c) for c in dated) and not any(legal_text(c) for c in credit_only)
    for i, card in enumerate(credit_only + dated):
        data = jpeg(render_scan(card, long_side=(1040, 1680)[i % 2], bleed=bool(i // 2 % 2), seed=i))
        counter = CountingEngine(engine)
        # No name: the collector reader looks for a number on the credit line, as it must for an unnamed card.
        extract_evidence(data, known_set_codes=known, engine=counter, only={"collector"})
        collector_reads, counter.calls = counter.calls, 0
        found = extract_evidence(data, known_set_codes=known, engine=counter,
                                 only={"collector", "legal"})
        assert isinstance(found, Evidence)
        if card in credit_only:
            assert collector_reads and counter.calls == collector_reads, f"{card['name']}: the credit was read again"
            assert found.legal_raw and found.copyright_year is None
        else:
            assert found.copyright_year == int(card["released_at"][:4]), f"{card['name']}: {found.legal_raw!r}"
