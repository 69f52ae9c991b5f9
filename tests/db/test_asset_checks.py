"""The asset checks: each invariant passes on a sound database and fails loudly (ERROR, and the blocking check
fails its run) on a database that breaks it; and the checks show on their assets through Dagster's GraphQL API."""

from __future__ import annotations

from pathlib import Path

import pytest
from dagster import AssetCheckSeverity, Definitions
from sqlalchemy import text

from stage_e_dagster.assets.checks import ASSET_CHECKS
from stage_e_dagster.assets.sources import card_sources
from stage_e_dagster.assets.stage_c import image_evidence
from stage_e_dagster.assets.stage_d import printing_votes
from stage_e_dagster.assets.stage_e import dispatch_outcome
from stage_e_dagster.db.core.engine import get_engine
from stage_e_dagster.db.runs import ledger, trips
from stage_e_dagster.job_contracts import INVARIANT_CHECKS
from stage_e_dagster.jobs import invariant_checks
from stage_e_dagster.resources.consensus import Consensus
from testkit.jobs import resources
from testkit.seed import seed_cards
from testkit.sql import execute

ROOT = Path(__file__).resolve().parents[2]
CHECKS = {
    ("printing_votes", "no_duplicate_votes"), ("printing_votes", "no_machine_only_resolution"),
    ("dispatch_outcome", "completed_batches_have_every_stage"), ("dispatch_outcome", "no_stale_open_trip"),
    ("dispatch_outcome", "no_silent_running_batch"),
}


def run_checks(db_url: str, instance, **overrides):
    """The `invariant_checks` job over the test database; the run result and {check name: evaluation}."""
    defs = Definitions(assets=[card_sources, image_evidence, printing_votes, dispatch_outcome],
                       asset_checks=ASSET_CHECKS, jobs=[invariant_checks], resources=resources(db_url, **overrides))
    result = defs.resolve_job_def(INVARIANT_CHECKS).execute_in_process(instance=instance, raise_on_error=False)
    return result, {e.check_name: e for e in result.get_asset_check_evaluations()}


def add_printing(db_url: str, scryfall_id: str) -> int:
    with get_engine(db_url).begin() as conn:
        return conn.execute(text(
            "INSERT INTO printing (scryfall_id, name, name_normalised, set_code, collector_number) "
            "VALUES (:s, 'Card', 'card', 'tst', :s) RETURNING id"), {"s": scryfall_id}).scalar_one()


def vote(db_url: str, card: int, printing: int, voter: str, source: str = "ocr") -> None:
    execute(db_url, "INSERT INTO card_printing_tag (card_id, printing_id, anonymous_id, source, confidence) "
                    "VALUES (%s, %s, %s, %s, 0.9)", (card, printing, voter, source))


def test_every_check_passes_on_a_sound_database(db_url, db_engine, instance):
    cards = seed_cards(db_url, 3)
    printing = add_printing(db_url, "p1")
    vote(db_url, cards[0], printing, "stage-d-join-key-v2")
    vote(db_url, cards[1], printing, "stage-d-join-key-v2")
    vote(db_url, cards[1], printing, "alice", source="user")
    execute(db_url, "UPDATE card SET printing_status = 'resolved', resolved_printing_id = %s WHERE id = %s",
            (printing, cards[1]))
    with db_engine.begin() as conn:
        ledger.open_batch(conn, "run-done", "card-event", "passive", cards)
        ledger.merge_counters(conn, "run-done", {"stage_c": {}, "stage_d": {}})
        ledger.close(conn, "run-done", "completed", {"stage_e": {}})
        ledger.open_batch(conn, "run-alive", "card-event", "passive", cards)
        trips.record_trip(conn, "run-tripped", "host_load", 9.0, 4.0)
    result, found = run_checks(db_url, instance)
    assert result.success
    assert {(e.asset_key.path[-1], name) for name, e in found.items()} == CHECKS
    assert all(e.passed and e.metadata["violations"].value == 0 for e in found.values())


def test_each_broken_invariant_fails_its_check_with_error_severity_and_the_run(db_url, db_engine, instance):
    cards = seed_cards(db_url, 4)
    one, two = add_printing(db_url, "p1"), add_printing(db_url, "p2")
    vote(db_url, cards[0], one, "stage-d-join-key-v2")
    vote(db_url, cards[0], two, "stage-d-join-key-v2")  # a second vote of one calculator on one card
    vote(db_url, cards[1], one, "stage-d-join-key-v2")
    vote(db_url, cards[1], one, "stage-d-fallback-v1")
    execute(db_url, "UPDATE card SET printing_status = 'resolved', resolved_printing_id = %s WHERE id = %s",
            (one, cards[1]))  # resolved by machines alone
    with db_engine.begin() as conn:
        ledger.open_batch(conn, "run-partial", "card-event", "passive", cards)
        ledger.merge_counters(conn, "run-partial", {"stage_c": {}})
    execute(db_url, "UPDATE dispatch_ledger SET status = 'completed' WHERE run_id = 'run-partial'")  # no D, no E
    with db_engine.begin() as conn:
        ledger.open_batch(conn, "run-dead", "card-event", "passive", cards[2:])
    execute(db_url, "UPDATE dispatch_ledger SET heartbeat_at = now() - interval '1 hour' WHERE run_id = 'run-dead'")
    with db_engine.begin() as conn:
        old = trips.record_trip(conn, "run-tripped", "host_load", 9.0, 4.0)
    execute(db_url, "UPDATE envelope_trip SET tripped_at = now() - interval '2 hours' WHERE id = %s", (old,))

    result, found = run_checks(db_url, instance)
    assert not result.success, "a failed blocking check fails the run"
    assert not any(e.passed for e in found.values())
    assert all(e.severity == AssetCheckSeverity.ERROR and e.metadata["violations"].value == 1
               for e in found.values())
    assert f"| {cards[0]} | stage-d-join-key-v2 | 2 |" in found["no_duplicate_votes"].metadata["sample"].value
    assert f"| {cards[1]} | resolved |" in found["no_machine_only_resolution"].metadata["sample"].value
    assert "stage_d,stage_e" in found["completed_batches_have_every_stage"].metadata["sample"].value
    assert old in found["no_stale_open_trip"].metadata["sample"].value
    assert "run-dead" in found["no_silent_running_batch"].metadata["sample"].value


def test_machine_resolution_is_allowed_under_machine_quorum(db_url, instance):
    cards = seed_cards(db_url, 1)
    printing = add_printing(db_url, "p1")
    vote(db_url, cards[0], printing, "stage-d-join-key-v2")
    execute(db_url, "UPDATE card SET printing_status = 'resolved', resolved_printing_id = %s WHERE id = %s",
            (printing, cards[0]))
    _, funnel = run_checks(db_url, instance)
    assert not funnel["no_machine_only_resolution"].passed
    _, quorum = run_checks(db_url, instance, consensus=Consensus(policy="machine-quorum"))
    assert quorum["no_machine_only_resolution"].passed
    assert quorum["no_machine_only_resolution"].description == "not applicable under the machine-quorum policy"


_CHECKS_QUERY = """
{ assetNodes { assetKey { path } assetChecksOrError { ... on AssetChecks { checks { name blocking jobNames } } } } }
"""
_EXECUTIONS = """
query ($key: AssetKeyInput!, $name: String!) {
  assetCheckExecutions(assetKey: $key, checkName: $name, limit: 1) {
    status evaluation { success severity description metadataEntries { label } }
  }
}
"""


@pytest.mark.slow
def test_the_checks_show_on_their_assets_through_graphql(db_url, instance):
    """The production code location, loaded by a code server as `dagster dev` loads it, queried through GraphQL:
    every check is attached to its asset, runs in `invariant_checks`, and a failed evaluation reads FAILED."""
    from dagster_graphql.test.utils import define_out_of_process_context, execute_dagster_graphql

    cards = seed_cards(db_url, 1)
    printing = add_printing(db_url, "p1")
    vote(db_url, cards[0], printing, "stage-d-join-key-v2")
    vote(db_url, cards[0], add_printing(db_url, "p2"), "stage-d-join-key-v2")
    run_checks(db_url, instance)
    with define_out_of_process_context(str(ROOT / "workspace.yaml"), None, instance) as context:
        nodes = execute_dagster_graphql(context, _CHECKS_QUERY).data["assetNodes"]
        shown = {(node["assetKey"]["path"][-1], check["name"]): check
                 for node in nodes for check in node["assetChecksOrError"]["checks"]}
        assert set(shown) == CHECKS
        assert all(check["blocking"] and "invariant_checks" in check["jobNames"] for check in shown.values())
        executions = execute_dagster_graphql(context, _EXECUTIONS, {
            "key": {"path": ["printing_votes"]}, "name": "no_duplicate_votes"}).data["assetCheckExecutions"]
    (latest,) = executions
    assert latest["status"] == "FAILED"
    assert latest["evaluation"]["severity"] == "ERROR" and not latest["evaluation"]["success"]
    assert {"violations", "sample"} <= {entry["label"] for entry in latest["evaluation"]["metadataEntries"]}
