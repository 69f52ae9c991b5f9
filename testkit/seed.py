"""Rows as ingest, Stage C and Stage D leave them, written straight into a test database (no pixels, no OCR), and
the ledger and the trips read back.

`target` is a database URL or an Engine. Cards: `seed_cards` (many at once, sharing `updated_at`) and `add_cards`
(named, with an expansion hint). Evidence: `add_evidence` (one card), `add_evidence_rows` (many), `set_evidence`.
Stage D's traces: `mark_decided`, `add_scan_log`. A file's bytes changing: `reingest`. Catalogues: `mini_catalog`
(three printings of "Opt") and the ground-truth mix of `seed_ground_truth` over a demo catalogue.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from datetime import date
from typing import Any

from sqlalchemy import Engine, select, text, update

from stage_e_dagster.db.core.engine import session_scope
from stage_e_dagster.db.core.models import Card, Expansion, ImageEvidence, Printing, Source
from stage_e_dagster.db.runs import ledger, trips
from stage_e_dagster.demo.catalog import set_printed_total
from stage_e_dagster.demo.info import layout_of_card
from stage_e_dagster.domain.catalog import normalise_name
from stage_e_dagster.domain.evidence.extract import EXTRACTOR_VERSIONS
from stage_e_dagster.domain.printed_lines import CODE_LAYOUTS, NUMBERLESS, RARITY_FIRST
from stage_e_dagster.domain.work import DECIDED_BY
from testkit.corpus import engine_of

VERSIONS = dict(EXTRACTOR_VERSIONS)
SCENARIOS = ("clean", "misread-set", "no-evidence", "no-text", "truncated")


# -- cards ---------------------------------------------------------------------------------------------------
def seed_cards(target: Engine | str, count: int) -> list[int]:
    """Insert `count` cards of one source in one statement (so they share `updated_at`); their ids in order."""
    with engine_of(target).begin() as conn:
        source = conn.execute(text(
            "INSERT INTO source (key, location) VALUES ('scans', '/scans') "
            "ON CONFLICT (key) DO UPDATE SET location = EXCLUDED.location RETURNING id")).scalar_one()
        ids = conn.execute(text(
            "INSERT INTO card (source_id, identifier, name, name_normalised, content_sha256, size_bytes) "
            "SELECT :source, 'f-' || md5(random()::text || g), 'Card', 'card', md5(random()::text || g), 10 "
            "FROM generate_series(1, :n) g RETURNING id"), {"source": source, "n": count}).scalars().all()
    return sorted(ids)


def add_cards(target: Engine | str, specs: list[tuple[str, str, str | None]], source_key: str = "seed") -> list[int]:
    """Cards from (identifier, name, expansion hint); returns their ids in order."""
    with session_scope(engine_of(target)) as s:
        source = s.scalar(select(Source).where(Source.key == source_key))
        if source is None:
            source = Source(key=source_key, kind="directory", location="/seed")
            s.add(source)
            s.flush()
        cards = [Card(source_id=source.id, identifier=identifier, name=name, name_normalised=normalise_name(name),
                      expansion_hint=hint, content_sha256=hashlib.sha256(identifier.encode()).hexdigest(),
                      size_bytes=1000) for identifier, name, hint in specs]
        s.add_all(cards)
        s.flush()
        return [card.id for card in cards]


def reingest(target: Engine | str, card_id: int) -> None:
    """What ingest does when a file's bytes change: a new content hash and a fresh `updated_at`."""
    with engine_of(target).begin() as conn:
        conn.execute(text("UPDATE card SET content_sha256 = md5(random()::text), updated_at = clock_timestamp() "
                          "WHERE id = :id"), {"id": card_id})


# -- evidence and Stage D's traces -----------------------------------------------------------------------------
def add_evidence(target: Engine | str, card_id: int, versions: dict[str, str] | None = None, **fields: Any) -> None:
    """An image_evidence row for the card's current bytes: current extractor versions unless `versions` says
    otherwise, and any evidence `fields`."""
    add_evidence_rows(target, {card_id: {"extractor_versions": dict(versions or VERSIONS), **fields}})


def add_evidence_rows(target: Engine | str, evidence: dict[int, dict[str, Any]]) -> None:
    """Evidence rows by card id, in one transaction."""
    with session_scope(engine_of(target)) as s:
        query = select(Card.id, Card.content_sha256).where(Card.id.in_(list(evidence)))
        shas = {row.id: row.content_sha256 for row in s.execute(query)}
        for card_id, fields in evidence.items():
            values = {"extractor_versions": dict(VERSIONS), **fields}
            s.add(ImageEvidence(card_id=card_id, content_sha256=shas[card_id], **values))


def set_evidence(target: Engine | str, card_id: int, **fields: Any) -> None:
    """Change fields of the card's stored evidence."""
    with session_scope(engine_of(target)) as s:
        s.execute(update(ImageEvidence).where(ImageEvidence.card_id == card_id).values(**fields))


def mark_decided(target: Engine | str, card_id: int) -> None:
    """What Stage D leaves once its calculators decided (voted or abstained) on the card's current evidence."""
    with engine_of(target).begin() as conn:
        conn.execute(text(
            "UPDATE image_evidence e SET decided_by = :decided FROM card c "
            "WHERE c.id = e.card_id AND c.content_sha256 = e.content_sha256 AND c.id = :id"),
            {"id": card_id, "decided": DECIDED_BY})


def add_scan_log(target: Engine | str, card_id: int, voter: str, reason: str, for_current_bytes: bool = True) -> None:
    with engine_of(target).begin() as conn:
        conn.execute(text(
            "INSERT INTO card_scan_log (card_id, anonymous_id, skip_reason, evidence_key) "
            "SELECT id, :voter, :reason, CASE WHEN :current THEN content_sha256 ELSE 'old' END FROM card "
            "WHERE id = :id"), {"id": card_id, "voter": voter, "reason": reason, "current": for_current_bytes})


# -- catalogues ------------------------------------------------------------------------------------------------
SYMBOL = {"aaa": 0x0F0F_0F0F_0F0F_0F0F, "bbb": 0x3333_CCCC_3333_CCCC, "ccc": 0x5555_5555_AAAA_AAAA}


def mini_catalog(target: Engine | str) -> dict[str, int]:
    """Three printings of "Opt": aaa #12 (2017, black), bbb #40 (2001, white), ccc #12 (2019, black); returns
    printing ids by `<set>-<number>`; every set has a reference symbol hash (`SYMBOL`)."""
    sets = {"aaa": date(2017, 1, 1), "bbb": date(2001, 1, 1), "ccc": date(2019, 1, 1)}
    specs = [("aaa", "12", "black"), ("bbb", "40", "white"), ("ccc", "12", "black")]
    with session_scope(engine_of(target)) as s:
        s.add_all(Expansion(code=code, name=code.upper(), released_at=day, symbol_phash=SYMBOL[code])
                  for code, day in sets.items())
        printings = [Printing(scryfall_id=f"sf-{code}-{number}", name="Opt", name_normalised="opt", set_code=code,
                              collector_number=number, released_at=sets[code], border_color=border, lang="en")
                     for code, number, border in specs]
        s.add_all(printings)
        s.flush()
        return {f"{p.set_code}-{p.collector_number}": p.id for p in printings}


def number_only_evidence(**overrides: Any) -> dict[str, Any]:
    """Evidence of an "Opt" bbb #40 scan whose collector line shows the number only: join-key's weak hit
    (number only) and the fallback's vote (border + symbol) agree."""
    fields: dict[str, Any] = {"collector_raw": "40/250", "collector_number": "40", "copyright_year": 2001,
                              "border_color": "white", "symbol_phash": SYMBOL["bbb"]}
    fields.update(overrides)
    return fields


def printing_ids(target: Engine | str) -> dict[str, int]:
    with session_scope(engine_of(target)) as s:
        return {sid: pid for sid, pid in s.execute(select(Printing.scryfall_id, Printing.id))}


def symbol_hashes(target: Engine | str) -> dict[str, int]:
    with session_scope(engine_of(target)) as s:
        return {code: h for code, h in s.execute(select(Expansion.code, Expansion.symbol_phash))}


# -- ground truth ----------------------------------------------------------------------------------------------
def _flip(value: int, bits: int, rng: random.Random) -> int:
    value &= (1 << 64) - 1
    for bit in rng.sample(range(64), bits):
        value ^= 1 << bit
    return value - (1 << 64) if value >= 1 << 63 else value


def front_name(card: dict[str, Any]) -> str:
    faces = card.get("card_faces")
    return str(faces[0]["name"]) if faces else str(card["name"]).split(" // ")[0]


@dataclass(frozen=True)
class SeededCard:
    """A seeded card: its id, the printing it truly shows, and the evidence scenario it was given."""

    card_id: int
    truth: int
    scenario: str
    modern: bool
    numbered: bool = True


def evidence_for(card: dict[str, Any], scenario: str, symbols: dict[str, int], rng: random.Random
                 ) -> dict[str, Any] | None:
    """Evidence fields a scan of `card` would yield under `scenario` (None: no evidence row), as the reader reads
    its layout (`domain.printed_lines`): set code, number and total on modern frames (no total from 2023), number
    and total at the end of the legal line on the 2003 and 1997 frames, no number before Exodus."""
    if scenario == "no-evidence":
        return None
    layout = layout_of_card(card)
    modern = layout in CODE_LAYOUTS
    code = str(card["set"])
    number = None if layout == NUMBERLESS else str(card["collector_number"])
    total = None if layout in (NUMBERLESS, RARITY_FIRST) else set_printed_total(code)
    symbol = symbols.get(code)
    fields: dict[str, Any] = {
        "collector_raw": f"{number}/{total}" if number else "Illus.", "collector_number": number,
        "collector_total": total, "collector_layout": None if layout == NUMBERLESS else layout,
        "set_code_raw": code.upper() if modern else None, "set_code": code if modern else None,
        "copyright_year": int(str(card["released_at"])[:4]), "border_color": card["border_color"],
        "symbol_phash": _flip(symbol, rng.randint(0, 3), rng) if symbol is not None else None, "language": "en",
    }
    if scenario == "misread-set":
        garbage = "q" + "".join(rng.choice("xz7") for _ in range(2))
        fields.update(set_code_raw=garbage.upper(), set_code=garbage, collector_layout=None)
    elif scenario == "no-text":
        fields.update(collector_raw="~ ,", collector_number=None, set_code_raw=None, set_code=None,
                      collector_total=None, collector_layout=None)
    elif scenario == "truncated":
        fields["truncated"] = True
    return fields


def seed_ground_truth(target: Engine | str, catalog: list[dict[str, Any]], count: int, seed: int = 5
                      ) -> list[SeededCard]:
    """`count` cards of random catalogue printings with evidence: mostly clean (what the reader reads of each
    layout: `evidence_for`), some misread set codes, missing text, truncated or missing evidence."""
    rng = random.Random(seed)
    ids = printing_ids(target)
    symbols = symbol_hashes(target)
    codes = sorted(symbols)
    picks = [rng.choice(catalog) for _ in range(count)]
    specs, scenarios = [], []
    for index, card in enumerate(picks):
        roll = rng.random()
        scenario = ("misread-set" if roll < 0.08 else "no-evidence" if roll < 0.12 else "no-text" if roll < 0.16
                    else "truncated" if roll < 0.18 else "clean")
        hint_roll = rng.random()
        hint = card["set"] if hint_roll < 0.3 else rng.choice(codes) if hint_roll < 0.33 else None
        name = front_name(card)
        identifier = f"{name} [{hint.upper()}] ({index}).png" if hint else f"{name} ({index}).png"
        specs.append((identifier, name, hint))
        scenarios.append(scenario)
    card_ids = add_cards(target, specs)
    seeded, evidence = [], {}
    for card_id, card, scenario in zip(card_ids, picks, scenarios, strict=True):
        fields = evidence_for(card, scenario, symbols, rng)
        if fields is not None:
            evidence[card_id] = fields
        layout = layout_of_card(card)
        seeded.append(SeededCard(card_id, ids[card["id"]], scenario, layout in CODE_LAYOUTS, layout != NUMBERLESS))
    add_evidence_rows(target, evidence)
    return seeded


# -- reading the ledger and the trips --------------------------------------------------------------------------
def ledger_row(target: Engine | str, run_id: str) -> ledger.LedgerRow | None:
    """The ledger row of `run_id` (None: no row)."""
    with engine_of(target).connect() as conn:
        return ledger.get(conn, run_id)


def open_trips(target: Engine | str) -> list[trips.Trip]:
    """The open envelope trips, oldest first."""
    with engine_of(target).connect() as conn:
        return trips.open_trips(conn)
