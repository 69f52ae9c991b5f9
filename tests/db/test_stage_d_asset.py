"""The `printing_votes` asset: config or the run's batch in, run_stage_d's counters out as metadata."""

import pytest
from dagster import AssetKey, Config, asset, materialize

from stage_e_dagster.assets.stage_d import printing_votes
from stage_e_dagster.domain.calculators import JOIN_KEY_ID
from stage_e_dagster.job_contracts import BatchSpec
from stage_e_dagster.resources.consensus import Consensus
from stage_e_dagster.resources.database import AppDatabase
from testkit.seed import add_cards, add_evidence, mini_catalog, number_only_evidence


class _BatchConfig(Config):
    card_ids: list[int] = []
    trigger: str = "manual"
    mode: str = "passive"
    force: bool = False


@asset(name="image_evidence")
def stub_image_evidence(config: _BatchConfig) -> None:
    """Stands in for Stage C: only carries the batch in its run config."""


@pytest.fixture
def card_ids(db_url):
    mini_catalog(db_url)
    ids = add_cards(db_url, [("Opt (1).png", "Opt", None), ("Opt (2).png", "Opt", None)])
    add_evidence(db_url, ids[0], **number_only_evidence())
    return ids


def _metadata(result):
    (event,) = [e for e in result.get_asset_materialization_events() if e.asset_key == AssetKey("printing_votes")]
    return {key: value.value for key, value in event.materialization.metadata.items()}


def test_printing_votes_with_explicit_card_ids(db_url, card_ids):
    # In-memory Dagster storage: it cannot matter here, the test reads only this run's own result.
    result = materialize(
        [printing_votes],
        resources={"database": AppDatabase(database_url=db_url), "consensus": Consensus()},
        run_config={"ops": {"printing_votes": {"config": {"card_ids": card_ids, "policy": "machine-quorum"}}}},
    )
    assert result.success
    meta = _metadata(result)
    assert (meta["cards_processed"], meta["votes_cast"], meta["routed_to_review"], meta["cards_resolved"]) == (
        2, 2, 1, 1)
    assert meta["policy"] == "machine-quorum"
    assert meta["cards_per_s"] == pytest.approx(meta["cards_processed"] / meta["elapsed_s"], rel=0.05)
    assert meta["skips"][JOIN_KEY_ID] == {"no-evidence": 1}
    assert db_url not in repr(meta)


def test_printing_votes_reads_the_runs_batch_when_unconfigured(db_url, card_ids):
    # In-memory Dagster storage: it cannot matter here, the test reads only this run's own result.
    result = materialize(
        [stub_image_evidence, printing_votes],
        resources={"database": AppDatabase(database_url=db_url), "consensus": Consensus()},
        run_config=BatchSpec(tuple(card_ids)).run_config(),
    )
    assert result.success
    meta = _metadata(result)
    assert (meta["cards_processed"], meta["votes_cast"], meta["already_voted"], meta["cards_resolved"]) == (
        2, 2, 0, 0)
