"""A trivial Stage D calculator, the "one module" of the registry test: it votes for the one candidate printing
released in the year the card's legal line names, and abstains otherwise."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from stage_e_dagster.domain.catalog import CardRef, ExpansionRef, PrintingRef
from stage_e_dagster.domain.decisions import Abstention, Vote
from stage_e_dagster.domain.evidence.model import Evidence

YEAR_ID = "stage-d-copyright-year-v1"


def decide_year(card: CardRef, evidence: Evidence | None, candidates: Sequence[PrintingRef],
                expansions: Mapping[str, ExpansionRef]) -> Vote | Abstention:
    if evidence is None or evidence.copyright_year is None:
        return Abstention(card.id, YEAR_ID, "no-year")
    same = [p for p in candidates if p.released_at is not None and p.released_at.year == evidence.copyright_year]
    if len(same) != 1:
        return Abstention(card.id, YEAR_ID, "ambiguous", {"printings": len(same)})
    return Vote(card.id, YEAR_ID, same[0].id, confidence=0.9)
