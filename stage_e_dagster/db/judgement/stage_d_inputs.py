"""What the Stage D calculators read for a batch: cards, their current evidence, candidate printings, sets.

A handful of set-based queries per batch, never one per card. Evidence is *current* when its `content_sha256`
equals the card's and its `extractor_versions` contain every current extractor version; a card without current
evidence gets None (the calculators abstain with `no-evidence`). Candidates are the printings whose normalised
name equals the card's, or, for a name with none, printings with a face of that name (a double-faced card
scanned and named by its front); a printing is read once, not once per language (`db.catalog.lookup`). Each card
carries its kind and the work rule's reason no machine may vote on it (`INELIGIBILITY`, `db/work/rule.sql`);
the catalogue holds no set types, so a printing's `set_type` is None and its layout alone says whether it is a
token printing.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from typing import Any

from sqlalchemy import Connection, Row, text

from stage_e_dagster.db.arrays import int_array, text_array
from stage_e_dagster.db.catalog.lookup import LOOKUP_RECORD
from stage_e_dagster.db.work.predicates import CURRENT_EVIDENCE, ELIGIBILITY_FROM, INELIGIBILITY
from stage_e_dagster.domain.catalog import CardRef, ExpansionRef, PrintingRef, normalise_name
from stage_e_dagster.domain.evidence.model import Evidence

EVIDENCE_FIELDS = tuple(f.name for f in fields(Evidence))
_PRINTING_FIELDS = len(fields(PrintingRef))
# In PrintingRef's field order, then the grouping key: rows become PrintingRef(*row[:-1]).
_PRINTING_COLUMNS = (
    "id, scryfall_id, name, set_code, collector_number, released_at, border_color, frame, layout, "
    "CAST(NULL AS text) AS set_type, name_normalised"
)

_CARDS = text(
    f"SELECT c.id, c.name, c.name_normalised, c.expansion_hint, c.kind, {INELIGIBILITY} AS ineligible "
    f"FROM {ELIGIBILITY_FROM} WHERE c.id = ANY(CAST(:ids AS bigint[])) ORDER BY c.id"
)
_EVIDENCE = text(
    f"SELECT e.card_id, {', '.join('e.' + name for name in EVIDENCE_FIELDS)} "
    f"FROM image_evidence AS e JOIN card AS c ON {CURRENT_EVIDENCE} WHERE c.id = ANY(CAST(:ids AS bigint[]))"
)
_BY_NAME = text(
    f"SELECT {_PRINTING_COLUMNS} FROM printing AS p WHERE name_normalised = ANY(CAST(:names AS text[])) "
    f"AND {LOOKUP_RECORD} ORDER BY id"
)
_WITH_FACES = text(
    f"SELECT {_PRINTING_COLUMNS}, face_names FROM printing AS p "
    f"WHERE face_names_normalised && CAST(:names AS text[]) AND {LOOKUP_RECORD} ORDER BY id"
)
_EXPANSIONS = text("SELECT code, released_at, symbol_phash, printed_total FROM expansion")


@dataclass
class StageDInputs:
    """Everything the calculators need for a batch, keyed by card id (only cards that exist)."""

    cards: dict[int, CardRef] = field(default_factory=dict)
    evidence: dict[int, Evidence | None] = field(default_factory=dict)
    candidates: dict[int, list[PrintingRef]] = field(default_factory=dict)
    expansions: dict[str, ExpansionRef] = field(default_factory=dict)


def load_expansions(conn: Connection) -> dict[str, ExpansionRef]:
    """Every known set by code."""
    return {row.code: ExpansionRef(row.code, row.released_at, row.symbol_phash, row.printed_total)
            for row in conn.execute(_EXPANSIONS)}


def load_current_evidence(conn: Connection, card_ids: Iterable[int]) -> dict[int, Evidence]:
    """Current evidence of the cards that have it."""
    ids = sorted(set(card_ids))
    if not ids:
        return {}
    rows = conn.execute(_EVIDENCE, {"ids": int_array(ids)})
    return {row[0]: Evidence(*row[1:]) for row in rows}  # columns in Evidence's field order


def _printing(row: Row[Any]) -> PrintingRef:
    return PrintingRef(*row[:_PRINTING_FIELDS])


def load_candidates(conn: Connection, names: Iterable[str]) -> dict[str, list[PrintingRef]]:
    """Candidate printings per normalised card name: same name, else a face of that name."""
    wanted = sorted({name for name in names if name})
    found: dict[str, list[PrintingRef]] = defaultdict(list)
    if not wanted:
        return found
    for row in conn.execute(_BY_NAME, {"names": text_array(wanted)}):
        found[row.name_normalised].append(_printing(row))
    faceless = set(wanted) - set(found)
    if faceless:
        for row in conn.execute(_WITH_FACES, {"names": text_array(sorted(faceless))}):
            for face in {normalise_name(face) for face in row.face_names or ()} & faceless:
                found[face].append(_printing(row))
    return found


def load_stage_d_inputs(
    conn: Connection,
    card_ids: Iterable[int],
    *,
    expansions: dict[str, ExpansionRef] | None = None,
) -> StageDInputs:
    """Cards, current evidence, candidates and sets for a batch."""
    inputs = StageDInputs(expansions=load_expansions(conn) if expansions is None else expansions)
    ids = sorted(set(card_ids))
    if not ids:
        return inputs
    names: dict[int, str] = {}
    for row in conn.execute(_CARDS, {"ids": int_array(ids)}):
        inputs.cards[row.id] = CardRef(row.id, row.name, row.expansion_hint, row.kind, row.ineligible)
        names[row.id] = row.name_normalised
    evidence = load_current_evidence(conn, inputs.cards)
    candidates = load_candidates(conn, names.values())
    for card_id in inputs.cards:
        inputs.evidence[card_id] = evidence.get(card_id)
        inputs.candidates[card_id] = candidates.get(names[card_id], [])
    return inputs
