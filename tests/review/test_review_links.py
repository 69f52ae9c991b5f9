"""From the Dagster UI to the review page: Stage D's materialization metadata counts the queue and links to it."""

from __future__ import annotations

from dagster import AssetKey, materialize

from stage_e_dagster.assets.stage_d import printing_votes
from stage_e_dagster.resources.consensus import Consensus
from stage_e_dagster.resources.database import AppDatabase
from stage_e_dagster.settings import Settings, review_page_url
from testkit.seed import add_cards, add_evidence, mini_catalog, number_only_evidence


def _metadata(db_url, card_ids, consensus):
    # In-memory Dagster storage: it cannot matter here, the test reads only this run's own result.
    result = materialize(
        [printing_votes], resources={"database": AppDatabase(database_url=db_url), "consensus": consensus},
        run_config={"ops": {"printing_votes": {"config": {"card_ids": card_ids}}}})
    assert result.success
    (event,) = [e for e in result.get_asset_materialization_events() if e.asset_key == AssetKey("printing_votes")]
    return {key: value.value for key, value in event.materialization.metadata.items()}


def test_stage_d_metadata_counts_the_review_queue_and_links_sample_cards(db_url):
    mini_catalog(db_url)
    ids = add_cards(db_url, [("Opt (1).png", "Opt", None), ("Opt (2).png", "Opt", None)])
    add_evidence(db_url, ids[0], **number_only_evidence())
    add_evidence(db_url, ids[1], collector_raw="~~", border_color="black")
    meta = _metadata(db_url, ids, Consensus(review_page_url="https://review.example.org/stage-e/"))
    assert (meta["review_queue"], meta["review_queue_routed"]) == (2, 1)
    assert meta["review_page"] == "https://review.example.org/stage-e/"
    for card_id in ids:
        assert f"(https://review.example.org/stage-e/card/{card_id})" in meta["review_sample"]
    assert "(routed)" in meta["review_sample"] and db_url not in repr(meta)
    plain = _metadata(db_url, ids, Consensus())
    assert plain["review_queue"] == 2 and "review_page" not in plain


def test_the_review_page_address_comes_from_settings():
    assert review_page_url(Settings()) == "http://127.0.0.1:8765"
    assert review_page_url(Settings(review_host="::1", review_port=9000)) == "http://[::1]:9000"
    assert review_page_url(Settings.from_env({"STAGE_E_REVIEW_BASE_URL": "https://r.example/x/"})) == "https://r.example/x"
    secret = "s3cr3t-review-token"
    assert secret not in repr(Settings.from_env({"STAGE_E_REVIEW_TOKEN": secret, "STAGE_E_REVIEW_ADMIN_TOKEN": secret}))
