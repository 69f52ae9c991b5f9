"""The packed ReadCatalog answers as a plain dict of each name's printings would: every name (whole, front face,
"A // B"), names it does not hold, each set's numbers, and a pickled copy (what an OCR worker receives)."""

from __future__ import annotations

import pickle

from stage_e_dagster.demo.all_cards import all_cards
from stage_e_dagster.domain.catalog import normalise_name
from stage_e_dagster.domain.evidence.parse import normalise_collector_number
from stage_e_dagster.domain.evidence.read_catalog import ReadCatalog

CARDS = list(all_cards(4_000, seed=9))
TRIPLES = [(c["name"], c["set"], c["collector_number"]) for c in CARDS]


def _reference() -> tuple[dict[str, list[tuple[str, str]]], dict[str, set[str]]]:
    """Each normalised name's (set, number) keys in first-seen order, once each, and each set's numbers."""
    by_name: dict[str, list[tuple[str, str]]] = {}
    numbers: dict[str, set[str]] = {}
    for name, code, number in TRIPLES:
        key = (code.lower(), normalise_collector_number(number))
        numbers.setdefault(key[0], set()).add(key[1])
        names = [normalise_name(name.split(" // ")[0])] + ([normalise_name(name)] if " // " in name else [])
        for each in names:
            keys = by_name.setdefault(each, [])
            if key not in keys:
                keys.append(key)
    return by_name, numbers


def test_every_name_gets_the_printings_a_plain_index_gives():
    catalog = ReadCatalog.build(TRIPLES)
    by_name, numbers = _reference()
    assert len(catalog.by_name) == len(by_name) > 1_000
    for name, keys in by_name.items():
        assert catalog.printings_of(name) == tuple(keys), name
    for name, _code, _number in TRIPLES:
        front = name.split(" // ")[0]
        assert catalog.printings_of(name)[:1] and catalog.printings_of(front) == tuple(by_name[normalise_name(front)])
    assert catalog.numbers == numbers
    assert catalog.set_codes == set(numbers)


def test_names_it_does_not_hold_find_nothing():
    catalog = ReadCatalog.build(TRIPLES)
    held = {normalise_name(name) for name, _c, _n in TRIPLES}
    missing = [f"{name} the Second" for name, _c, _n in TRIPLES[:500] if " // " not in name] + ["", "x", "zz zz zz"]
    for name in missing:
        if normalise_name(name) not in held:
            assert catalog.printings_of(name) == ()
    assert ReadCatalog.build([]).printings_of("Shock") == ()


def test_a_pickled_copy_is_equal_and_answers_alike():
    catalog = ReadCatalog.build(TRIPLES, totals={"abc": 3}, codeless=["abc"])
    copy = pickle.loads(pickle.dumps(catalog))
    assert copy == catalog and copy is not catalog
    assert all(copy.printings_of(name) == catalog.printings_of(name) for name, _c, _n in TRIPLES[:300])
    assert copy != ReadCatalog.build(TRIPLES[:-1], totals={"abc": 3}, codeless=["abc"])
