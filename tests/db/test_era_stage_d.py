"""Stage D on cards printed before collector numbers, through the database: a unique old printing gets the era
calculator's vote, and an ambiguous one goes to review with the short list of candidates in its scan-log detail."""

from __future__ import annotations

from datetime import date

from stage_e_dagster.db.core.engine import session_scope
from stage_e_dagster.db.core.models import Expansion, Printing
from stage_e_dagster.domain.calculators import ERA_ID, SLOW_PATH_ID, TO_REVIEW
from stage_e_dagster.stages.stage_d import run_stage_d
from testkit.corpus import engine_of
from testkit.seed import add_cards, add_evidence
from testkit.sql import rows

# (set, released, border, symbol hash): 4ed and chr share a near-identical symbol, ice's is far from both.
SETS = [("4ed", date(1995, 4, 1), "white", 0xFFFFF << 40),
        ("chr", date(1995, 7, 1), "white", (0xFFFFF << 40) ^ 0x1F),
        ("ice", date(1995, 6, 1), "black", 0xFFFFF << 20), ("m10", date(2009, 7, 17), "black", 0xFFFFF)]


def old_catalogue(db_url: str) -> dict[str, int]:
    """"Dark Ritual" in three 1995 sets without collector numbers and one modern set; printing ids by set."""
    with session_scope(engine_of(db_url)) as s:
        s.add_all(Expansion(code=code, name=code.upper(), released_at=day, symbol_phash=symbol)
                  for code, day, _, symbol in SETS)
        printings = [Printing(scryfall_id=f"sf-{code}", name="Dark Ritual", name_normalised="dark ritual",
                              set_code=code, collector_number=str(10 + i), released_at=day, border_color=border,
                              frame="2003" if code == "m10" else "1993", layout="normal", lang="en")
                     for i, (code, day, border, _) in enumerate(SETS)]
        s.add_all(printings)
        s.flush()
        return {p.set_code: p.id for p in printings}


def test_old_cards_are_voted_when_unique_and_routed_with_their_candidates_when_not(db_url, db_engine) -> None:
    ids = old_catalogue(db_url)
    unique, twins = add_cards(db_url, [("ritual-ice.png", "Dark Ritual", None), ("ritual-4ed.png", "Dark Ritual",
                                                                                    None)])
    # No number on either; ice is the one black-bordered 1995 printing; the other shows 4ed's symbol, whose near
    # twin (chr) shares its year and border, so the symbol cannot tell them apart.
    add_evidence(db_url, unique, copyright_year=1995, border_color="black", legal_raw="© 1995 Wizards")
    add_evidence(db_url, twins, copyright_year=1995, border_color="white", symbol_phash=(0xFFFFF << 40) ^ (0xF << 30),
                 legal_raw="© 1995 Wizards")

    counters = run_stage_d(db_engine, [unique, twins], "run-era")

    assert counters["outcomes"][ERA_ID] == {"vote": 1, "ambiguous": 1}
    assert rows(db_url, "SELECT card_id, anonymous_id, printing_id FROM card_printing_tag") == [
        (unique, ERA_ID, ids["ice"])]
    ((detail,),) = rows(db_url, "SELECT detail FROM card_scan_log WHERE card_id = %s AND anonymous_id = %s "
                                "AND skip_reason = %s", (twins, SLOW_PATH_ID, TO_REVIEW))
    assert sorted(detail["era"]["detail"]["candidate_ids"]) == sorted([ids["4ed"], ids["chr"]])
    assert "era:ambiguous" in detail["why"]
