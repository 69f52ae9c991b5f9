"""Catalogue-driven re-opening: an import that adds or changes printings re-opens, for Stage D only, exactly the
cards whose candidate set changed, and the stream picks them up."""

from __future__ import annotations

import random

from stage_e_dagster.db.catalog.importer import import_catalog
from stage_e_dagster.db.work.queue import backlog, cards_needing_work
from stage_e_dagster.demo.catalog import generate_catalog, write_catalog
from stage_e_dagster.domain.calculators import JOIN_KEY_ID
from stage_e_dagster.domain.catalog import normalise_name
from stage_e_dagster.stages.stage_d import run_stage_d
from testkit.seed import add_cards, add_evidence_rows, evidence_for, front_name, printing_ids
from testkit.sql import rows


def test_a_new_set_reopens_only_the_cards_it_concerns(db_url, db_engine, tmp_path):
    catalog = generate_catalog(300, seed=4)
    modern = sorted({c["set"] for c in catalog if c["frame"] == "2015"})
    late = min(modern, key=lambda code: sum(c["set"] == code for c in catalog))  # the set not yet released
    write_catalog(tmp_path / "partial.json", [c for c in catalog if c["set"] != late])
    write_catalog(tmp_path / "full.json", catalog)
    assert import_catalog(db_engine, tmp_path / "partial.json").reopened == set()  # nothing decided yet

    rng = random.Random(2)
    in_late = rng.sample([c for c in catalog if c["set"] == late], 6)
    elsewhere = rng.sample([c for c in catalog if c["set"] != late], 21)
    picks = in_late + elsewhere
    specs = [(f"{front_name(c)} ({i}).png", front_name(c), None) for i, c in enumerate(picks)]
    specs.append(("Unheard Of Card.png", "Unheard Of Card", None))  # no printing of that name (yet)
    ids = add_cards(db_url, specs)
    evidence = {card_id: evidence_for(card, "clean", {}, rng) for card_id, card in zip(ids, picks, strict=False)}
    evidence[ids[-2]] = evidence_for(picks[-1], "misread-set", {}, rng)  # a set code that names no known set
    evidence[ids[-1]] = {"collector_raw": "7/250", "collector_number": "7", "copyright_year": 2020}
    add_evidence_rows(db_url, evidence)
    first = run_stage_d(db_engine, ids, "run-1")
    with db_engine.connect() as conn:
        assert first["cards_processed"] == len(ids) and backlog(conn)["stage_d"] == 0
    votes_per_card = "SELECT card_id, count(*) FROM card_printing_tag GROUP BY card_id"
    before = dict(rows(db_url, votes_per_card))

    # The oracle, from the catalogue file: cards named like a printing of the new set, plus the two that
    # abstained for lack of a printing (no printing of their name; a set code no set has).
    late_names = {normalise_name(c["name"]) for c in catalog if c["set"] == late}
    late_names |= {normalise_name(f["name"]) for c in catalog if c["set"] == late for f in c.get("card_faces") or ()}
    by_name = {card_id for card_id, (_, name, _) in zip(ids, specs, strict=True) if normalise_name(name) in late_names}
    expected = by_name | {ids[-1], ids[-2]}
    assert set(ids[:len(in_late)]) <= by_name and len(expected) < len(ids)

    summary = import_catalog(db_engine, tmp_path / "full.json")
    assert summary.changed == sum(c["set"] == late for c in catalog)
    assert summary.reopened == expected
    # No new OCR: the evidence stays current; the stream is offered exactly those cards, for Stage D.
    with db_engine.connect() as conn:
        queue = backlog(conn)
        assert {c.id for c in cards_needing_work(conn, 1000)} == expected
    assert (queue["stage_c"], queue["stage_d"]) == (0, len(expected))

    with db_engine.connect() as conn:
        offered = [c.id for c in cards_needing_work(conn, 1000)]
    second = run_stage_d(db_engine, offered, "run-2")
    with db_engine.connect() as conn:
        assert second["cards_processed"] == len(expected) and backlog(conn)["stage_d"] == 0
    printings = printing_ids(db_url)
    late_votes = rows(db_url, "SELECT card_id, printing_id, run_id FROM card_printing_tag "
                              "WHERE anonymous_id = %s AND card_id = ANY(%s)", (JOIN_KEY_ID, ids[:len(in_late)]))
    assert sorted(late_votes) == sorted((card_id, printings[card["id"]], "run-2")
                                        for card_id, card in zip(ids, in_late, strict=False))
    untouched = set(ids) - expected
    assert {run for (run,) in rows(db_url, "SELECT DISTINCT run_id FROM card_printing_tag "
                                           "WHERE card_id = ANY(%s)", (sorted(untouched),))} == {"run-1"}
    after = dict(rows(db_url, votes_per_card))
    assert {c: n for c, n in before.items() if c in untouched} == {c: n for c, n in after.items() if c in untouched}

    again = import_catalog(db_engine, tmp_path / "full.json")  # the same file: nothing changed or re-opened
    assert (again.changed, again.reopened) == (0, set())

    corrected = elsewhere[0]  # a correction to one printing re-opens the cards of that name, and the abstainers
    corrected["artist"] = "Corrected Artist"
    write_catalog(tmp_path / "full.json", catalog)
    fixed = import_catalog(db_engine, tmp_path / "full.json")
    same_name = {card_id for card_id, (_, name, _) in zip(ids, specs, strict=True)
                 if normalise_name(name) == normalise_name(corrected["name"])}
    assert fixed.changed == 1 and fixed.reopened == same_name | {ids[-1], ids[-2]}
