"""The upserts and locks of the work rule, Stage C's evidence, the catalogue and the migrations, raced: two
connections released by a barrier meet at the statement under test (a gate holds the table or row they both
write, `testkit.race`), and the oracle is what the database holds afterwards, checked against the rule.

- the work rule: two syncs of a changed rule recompute it once; the rule's own upserts into `card_work`
  (`refresh_card_work`, both branches, and the recompute) absorb a row another transaction inserted first; two
  reconcile steps never take the same window;
- evidence: two writes of one card's bytes leave one row holding both writers' extractor versions; a carry to a
  copy never replaces the copy's own current reading;
- the catalogue: two imports of one file at once store each printing once and count each change once;
- migrations: two upgrades of an empty database at once leave one schema at head.
"""

from __future__ import annotations

import logging

import pytest
from sqlalchemy import text

from stage_e_dagster.db.catalog.importer import import_catalog
from stage_e_dagster.db.core import migrate
from stage_e_dagster.db.core.engine import get_engine
from stage_e_dagster.db.judgement.evidence_store import save_evidence
from stage_e_dagster.db.judgement.identity_groups import carry_evidence
from stage_e_dagster.db.work import work_rule
from stage_e_dagster.db.work.queue import RECONCILE_CURSOR, reconcile_next
from stage_e_dagster.demo.catalog import generate_catalog, write_catalog
from stage_e_dagster.domain.evidence.model import Evidence
from testkit.race import queued_behind_gate, race, raced_behind_gate
from testkit.seed import VERSIONS, add_cards, add_evidence, mark_decided, seed_cards
from testkit.server import scratch_database
from testkit.sql import execute, rows, scalar

CARD_WORK_GATE = "LOCK TABLE card_work IN SHARE ROW EXCLUSIVE MODE"


def _in_transaction(url: str, work):
    def racer():
        with get_engine(url).begin() as conn:
            return work(conn)
    return racer


def _settled(url: str, count: int) -> list[int]:
    """Cards with current, decided evidence: owed nothing, so no `card_work` row."""
    cards = seed_cards(url, count)
    for card in cards:
        add_evidence(url, card)
        mark_decided(url, card)
    assert scalar(url, "SELECT count(*) FROM card_work") == 0
    return cards


def _drift(url: str) -> list[tuple]:
    """Cards whose `card_work` row differs from the rule (`card_work_stage`)."""
    return rows(url, "SELECT c.id, w.stage, card_work_stage(c.id) FROM card c "
                     "LEFT JOIN card_work w ON w.card_id = c.id WHERE w.stage IS DISTINCT FROM card_work_stage(c.id)")


# -- the work rule --------------------------------------------------------------------------------------------------
def test_two_syncs_of_a_changed_rule_recompute_it_once(db_url, caplog):
    """Both see the stored rule differ; the advisory lock makes the second wait and then find the work done."""
    cards = _settled(db_url, 4)
    changed = work_rule.code_rule(min_dpi=work_rule.CODE_RULE.min_dpi + 50)
    engine = get_engine(db_url)
    caplog.set_level(logging.WARNING, logger=work_rule.__name__)
    results = raced_behind_gate(db_url, "SELECT 1 FROM work_rule WHERE id = 1 FOR UPDATE", None,
                                *[lambda: work_rule.sync(engine, changed)] * 2)
    assert sorted(o.result() for o in results) == [0, len(cards)], "one recomputes every card, the other finds it done"
    assert sum("work rules changed" in r.getMessage() for r in caplog.records) == 1
    assert _drift(db_url) == [] and scalar(db_url, "SELECT count(*) FROM card_work WHERE stage = 'D'") == len(cards)


@pytest.mark.parametrize("reset", [False, True], ids=["refresh", "reset"])
def test_the_rules_upsert_absorbs_a_row_another_transaction_inserted_first(db_url, reset):
    """Two transactions refresh one card's work at once (e.g. its evidence and its file changed together): the
    second's insert meets the first's uncommitted row and updates it instead of failing."""
    (card,) = _settled(db_url, 1)
    execute(db_url, "UPDATE image_evidence SET decided_by = NULL WHERE card_id = %s", (card,))
    execute(db_url, "DELETE FROM card_work WHERE card_id = %s", (card,))  # as a rule change would leave it
    refresh = _in_transaction(db_url, lambda conn: conn.execute(text("SELECT refresh_card_work(:c, :r)"),
                                                                {"c": card, "r": reset}))
    for outcome in raced_behind_gate(db_url, CARD_WORK_GATE, None, refresh, refresh):
        outcome.result()
    assert rows(db_url, "SELECT stage FROM card_work WHERE card_id = %s", (card,)) == [("D",)]
    assert _drift(db_url) == []


def test_the_recompute_absorbs_a_row_a_trigger_inserted_first(db_url):
    (card,) = _settled(db_url, 1)
    execute(db_url, "UPDATE image_evidence SET decided_by = NULL WHERE card_id = %s", (card,))
    execute(db_url, "DELETE FROM card_work WHERE card_id = %s", (card,))
    first, second = queued_behind_gate(
        db_url, CARD_WORK_GATE, None,
        _in_transaction(db_url, lambda conn: conn.execute(text("SELECT refresh_card_work(:c)"), {"c": card})),
        _in_transaction(db_url, lambda conn: work_rule.recompute_range(conn, card - 1, card)))
    first.result(), second.result()
    assert _drift(db_url) == [] and rows(db_url, "SELECT stage FROM card_work") == [("D",)]


def test_two_reconcile_steps_at_once_never_take_the_same_window(db_url):
    seed_cards(db_url, 30)
    engine = get_engine(db_url)
    reconcile_next(engine, 10)  # the cursor row exists, at 10
    steps = raced_behind_gate(db_url, "SELECT 1 FROM sweep_cursor WHERE name = %s FOR UPDATE", (RECONCILE_CURSOR,),
                              *[lambda: reconcile_next(engine, 10)] * 2)
    taken = [o.result() for o in steps]
    assert taken.count(None) == 1, "the later one finds the cursor moved"
    (done,) = [t for t in taken if t is not None]
    assert (done.start, done.end) == (10, 20)
    assert rows(db_url, "SELECT position, wrap_count FROM sweep_cursor WHERE name = %s", (RECONCILE_CURSOR,)) == [
        (20, 0)]


# -- evidence ---------------------------------------------------------------------------------------------------
def test_two_writes_of_one_cards_evidence_leave_one_row_with_both_versions(db_url):
    (card,) = seed_cards(db_url, 1)
    sha = scalar(db_url, "SELECT content_sha256 FROM card WHERE id = %s", (card,))
    names = sorted(VERSIONS)
    halves = ({name: VERSIONS[name] for name in names[:2]}, {name: VERSIONS[name] for name in names[2:]})
    writes = [_in_transaction(db_url, lambda conn, v=v, run=run: save_evidence(
        conn, card, sha, Evidence(width=600 + run, extractor_versions=v), f"run-{run}"))
        for run, v in enumerate(halves)]
    for outcome in raced_behind_gate(db_url, "LOCK TABLE image_evidence IN SHARE ROW EXCLUSIVE MODE", None, *writes):
        outcome.result()
    ((versions,),) = rows(db_url, "SELECT extractor_versions FROM image_evidence WHERE card_id = %s", (card,))
    assert versions == VERSIONS, "one row, holding what both writers extracted"


def test_a_carry_to_a_copy_never_replaces_the_copys_own_reading(db_url):
    """A batch reads the copy itself while another carries the donor's evidence to it: whichever writes second,
    the copy keeps its own current reading."""
    donor, copy = add_cards(db_url, [("a.png", "Card", None), ("b.png", "Card", None)])
    execute(db_url, "UPDATE card SET content_sha256 = (SELECT content_sha256 FROM card WHERE id = %s) WHERE id = %s",
            (donor, copy))
    sha = scalar(db_url, "SELECT content_sha256 FROM card WHERE id = %s", (donor,))
    add_evidence(db_url, donor, width=100)
    own = _in_transaction(db_url, lambda conn: save_evidence(conn, copy, sha, Evidence(
        width=200, extractor_versions=dict(VERSIONS)), "own-read"))
    carry = _in_transaction(db_url, lambda conn: carry_evidence(conn, [copy], "carry", donor=donor))
    first, second = queued_behind_gate(db_url, "LOCK TABLE image_evidence IN SHARE ROW EXCLUSIVE MODE", None,
                                       own, carry)
    first.result()
    assert second.result() in (set(), {copy}), "the carry leaves a current own row, or goes first and is replaced"
    assert rows(db_url, "SELECT width, carried_from_card_id FROM image_evidence WHERE card_id = %s", (copy,)) == [
        (200, None)]


# -- the catalogue and the migrations ---------------------------------------------------------------------------
def test_two_imports_of_one_catalogue_at_once_store_and_count_each_printing_once(db_url, tmp_path):
    """The sets' upsert locks the rows of the sets both files name, so the second import waits for the first, then
    finds every printing stored and equal: nothing stored twice, no change counted twice. (The printings' own
    upsert meets rows already committed: a changed re-import, `test_catalog_import.py`.)"""
    catalogue = generate_catalog(40, seed=3)
    write_catalog(tmp_path / "catalog.json", catalogue)
    engine = get_engine(db_url)
    imports = raced_behind_gate(db_url, "LOCK TABLE printing, expansion IN SHARE ROW EXCLUSIVE MODE", None,
                                *[lambda: import_catalog(engine, tmp_path / "catalog.json")] * 2)
    summaries = [o.result() for o in imports]
    assert sorted(s.changed for s in summaries) == [0, len(catalogue)], "the second import changes nothing"
    assert scalar(db_url, "SELECT count(*) FROM printing") == len(catalogue)
    assert scalar(db_url, "SELECT count(*) FROM expansion") == len({card["set"] for card in catalogue})


def test_two_upgrades_of_an_empty_database_at_once_leave_one_schema_at_head(pg_server_url, db_url):
    """Two `stage-e` commands starting at once on a new database: the migration lock makes one wait."""
    with scratch_database(pg_server_url, "mig") as url:
        for outcome in race(lambda: migrate.upgrade(url), lambda: migrate.upgrade(url)):
            outcome.result()
        assert rows(url, "SELECT version_num FROM alembic_version") == rows(db_url, "SELECT version_num FROM "
                                                                                   "alembic_version")
        assert scalar(url, "SELECT count(*) FROM work_rule") == 1
