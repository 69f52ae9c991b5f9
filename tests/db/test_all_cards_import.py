"""An All-Cards-shaped file (every layout, eleven languages) imported: every record is a printing keyed by its Scryfall
id, each layout's names are found by the name lookups, and a name's candidates are its printings, one record each
(the English one, else one language), never one per translation."""

from __future__ import annotations

from collections import Counter, defaultdict

import pytest

from stage_e_dagster.db.catalog.importer import import_catalog
from stage_e_dagster.db.catalog.read import current_read_catalog
from stage_e_dagster.db.judgement.stage_d_inputs import load_candidates
from stage_e_dagster.demo.all_cards import LANGUAGES, LAYOUTS, all_cards
from stage_e_dagster.demo.catalog import write_catalog
from stage_e_dagster.domain.catalog import normalise_name
from stage_e_dagster.domain.evidence.parse import normalise_collector_number
from testkit.sql import rows

RECORDS = 3_000


@pytest.fixture(scope="module")
def records() -> list[dict]:
    cards = list(all_cards(RECORDS, seed=2))
    # A printing that exists only in other languages: drop the English record of a translated printing.
    translated = Counter((c["set"], c["collector_number"]) for c in cards if c["lang"] != "en")
    only_foreign = next(c for c in cards if c["lang"] == "en" and translated[(c["set"], c["collector_number"])] > 1
                        and c["layout"] == "normal")
    return [c for c in cards if c is not only_foreign]


def _by_printing(cards: list[dict]) -> dict[tuple[str, str], list[dict]]:
    out: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for card in cards:
        out[(card["set"], card["collector_number"])].append(card)
    return out


def test_the_file_has_every_layout_and_language(records):
    # The test below is only as good as the variety it imports.
    assert {c["layout"] for c in records} == set(LAYOUTS)
    assert {c["lang"] for c in records} == {"en", *LANGUAGES}


def test_every_record_is_a_printing_with_its_language(db_engine, db_url, records, tmp_path):
    path = tmp_path / "all-cards.json"
    write_catalog(path, records)
    summary = import_catalog(db_engine, path)
    assert summary.printings == len(records) and not summary.malformed
    stored = Counter(lang for (lang,) in rows(db_url, "SELECT lang FROM printing"))
    assert stored == Counter(c["lang"] for c in records)


def test_each_layouts_names_are_found_once_per_printing(db_engine, records, tmp_path):
    path = tmp_path / "all-cards.json"
    write_catalog(path, records)
    import_catalog(db_engine, path)
    printings = _by_printing(records)
    english = [c for c in records if c["lang"] == "en"]
    # Every name a scan may carry: the full name, and each face's name for a multi-faced card.
    wanted: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for key, group in printings.items():
        card = next((c for c in group if c["lang"] == "en"), group[0])
        wanted[normalise_name(card["name"])].add(key)
        for face in card.get("card_faces") or ():
            wanted[normalise_name(face["name"])].add(key)
    with db_engine.connect() as conn:
        found = load_candidates(conn, list(wanted))
        catalog = current_read_catalog(conn)
    for name, keys in wanted.items():
        got = [(p.set_code, p.collector_number) for p in found.get(name, [])]
        if any(normalise_name(c["name"]) == name for k in keys for c in printings[k]):
            # A name some printing carries whole: exactly its printings, each once.
            assert sorted(got) == sorted(k for k in keys if any(normalise_name(c["name"]) == name
                                                                for c in printings[k])), name
        else:
            # Only a face's name (found through the faces when no printing carries it whole).
            assert sorted(got) == sorted(keys), name
    for layout in LAYOUTS:
        card = next(c for c in english if c["layout"] == layout)
        key = (card["set"], normalise_collector_number(card["collector_number"]))
        front = (card.get("card_faces") or [card])[0]["name"]
        assert key in catalog.printings_of(card["name"]) and key in catalog.printings_of(front), layout


def test_a_printing_without_an_english_record_is_read_once_in_one_language(db_engine, records, tmp_path):
    path = tmp_path / "all-cards.json"
    write_catalog(path, records)
    import_catalog(db_engine, path)
    foreign = [(key, group) for key, group in _by_printing(records).items()
               if all(c["lang"] != "en" for c in group)]
    assert len(foreign) == 1 and len(foreign[0][1]) > 1
    (code, number), group = foreign[0]
    with db_engine.connect() as conn:
        found = load_candidates(conn, [normalise_name(group[0]["name"])])[normalise_name(group[0]["name"])]
    mine = [p for p in found if (p.set_code, p.collector_number) == (code, number)]
    first = min(group, key=lambda c: c["lang"])
    assert [p.scryfall_id for p in mine] == [first["id"]]


def test_text_that_copy_and_array_literals_escape_round_trips(db_engine, tmp_path):
    odd = 'Back\\slash "Quoted"\tTab\nLine\r, {Brace}, NULL, \\N, Æther'
    card = dict(next(all_cards(1, seed=3)), name=f"{odd} // Other", artist=odd, layout="split",
                card_faces=[{"name": odd}, {"name": "Other"}])
    path = tmp_path / "odd.json"
    write_catalog(path, [card])
    import_catalog(db_engine, path)
    with db_engine.connect() as conn:
        found = load_candidates(conn, [normalise_name(odd)])[normalise_name(odd)]
        stored = conn.exec_driver_sql("SELECT name, artist, face_names FROM printing").one()
    assert [p.scryfall_id for p in found] == [card["id"]]
    assert tuple(stored) == (f"{odd} // Other", odd, [odd, "Other"])
    assert import_catalog(db_engine, path).changed == 0
