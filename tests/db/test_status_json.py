"""`stage-e status --json`: the text view's facts as one JSON document with stable keys, and the funnel states in
both views."""

from __future__ import annotations

import json

from click.testing import CliRunner
from dagster import DagsterRunStatus
from sqlalchemy import text

from stage_e_dagster.cli import main
from stage_e_dagster.db.core.engine import get_engine
from stage_e_dagster.db.runs import ledger, trips
from testkit.instance import add_runs
from testkit.seed import add_evidence, add_scan_log, mark_decided, seed_cards

CARD_KEYS = {"total", "new", "evidenced", "awaiting_votes", "with_machine_vote", "in_review", "unresolved", "resolved",
             "no_match", "missing"}


def seed_funnel(db_url: str) -> list[int]:
    """Eight cards: two new, one awaiting votes, two with a machine vote (one routed to review), one resolved by a
    person, one judged no match, one whose file vanished."""
    ids = seed_cards(db_url, 8)
    for card in ids[2:]:
        add_evidence(db_url, card)
    for card in ids[3:]:
        mark_decided(db_url, card)
    with get_engine(db_url).begin() as conn:
        printing = conn.execute(text(
            "INSERT INTO printing (scryfall_id, name, name_normalised, set_code, collector_number) "
            "VALUES ('p1', 'Card', 'card', 'tst', '1') RETURNING id")).scalar_one()
        for card, voter, source in ((ids[3], "stage-d-join-key-v2", "ocr"), (ids[4], "stage-d-fallback-v1", "ocr"),
                                    (ids[5], "alice", "user"), (ids[5], "stage-d-join-key-v2", "ocr")):
            conn.execute(text("INSERT INTO card_printing_tag (card_id, printing_id, anonymous_id, source) "
                              "VALUES (:c, :p, :v, :s)"), {"c": card, "p": printing, "v": voter, "s": source})
        conn.execute(text("UPDATE card SET printing_status = 'resolved', resolved_printing_id = :p WHERE id = :c"),
                     {"p": printing, "c": ids[5]})
        conn.execute(text("UPDATE card SET printing_status = 'no_match' WHERE id = :c"), {"c": ids[6]})
        conn.execute(text("UPDATE card SET missing_since = now() WHERE id = :c"), {"c": ids[7]})
    add_scan_log(db_url, ids[4], "stage-d-slow-path-v1", "to-review")
    return ids


def test_status_json_is_one_document_with_every_key(db_url, db_engine, instance, monkeypatch):
    monkeypatch.setenv("STAGE_E_DATABASE_URL", db_url)
    monkeypatch.setenv("STAGE_E_DAGSTER_DATABASE_URL", db_url)  # unused: DAGSTER_HOME is the test instance
    ids = seed_funnel(db_url)
    with db_engine.begin() as conn:
        ledger.open_batch(conn, "run-ok-123456", "card-event", "passive", ids[:2])
        ledger.close(conn, "run-ok-123456", "completed")
        trip = trips.record_trip(conn, "run-bad", "host_load", 9.0, 4.0)
    add_runs(instance, DagsterRunStatus.QUEUED, 2)

    result = CliRunner().invoke(main, ["status", "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert set(doc) == {"generated_at", "cards", "backlog", "ledger", "trips", "slots", "queue", "reclaimed",
                        "ineligible"}
    assert doc["cards"] == {"total": 8, "new": 2, "evidenced": 5, "awaiting_votes": 1, "with_machine_vote": 3,
                            "in_review": 1, "unresolved": 5, "resolved": 1, "no_match": 1, "missing": 1}
    assert set(doc["cards"]) == CARD_KEYS
    assert doc["backlog"] == {"stage_c": 2, "stage_d": 1, "waiting": 0, "in_running_batches": 0}
    assert doc["ledger"]["by_status"] == {"running": 0, "completed": 1, "throttled": 0, "halted": 0, "failed": 0}
    (recent,) = doc["ledger"]["recent"]
    assert (recent["run_id"], recent["status"], recent["cards"]) == ("run-ok-123456", "completed", 2)
    assert doc["trips"]["halted"] is True and [t["id"] for t in doc["trips"]["open"]] == [trip]
    assert doc["slots"] == {"held": 0, "holders": []}
    assert doc["queue"] == {"reachable": True, "queued": 2, "started": 0, "error": None}
    assert doc["reclaimed"] == [] and db_url not in result.stdout


def test_the_text_view_shows_the_funnel(db_url, monkeypatch):
    monkeypatch.setenv("STAGE_E_DATABASE_URL", db_url)
    seed_funnel(db_url)
    result = CliRunner().invoke(main, ["status"])
    assert result.exit_code == 0, result.output
    assert ("funnel:   2 new, 5 evidenced, 1 awaiting votes, 3 with a machine vote, 1 in review, 1 resolved, "
            "1 no match") in result.output


def test_an_unreachable_dagster_instance_leaves_the_queue_unknown(db_url, tmp_path, monkeypatch):
    monkeypatch.setenv("STAGE_E_DATABASE_URL", db_url)
    monkeypatch.setenv("STAGE_E_DAGSTER_DATABASE_URL", db_url)
    (tmp_path / "dagster.yaml").write_text("storage:\n  no_such_storage: {}\n")
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path))
    result = CliRunner().invoke(main, ["status", "--json"])
    assert result.exit_code == 0, result.output
    queue = json.loads(result.stdout)["queue"]
    assert queue["reachable"] is False and queue["queued"] is None and queue["error"]
