"""The `printing_votes` asset: Stage D over a run's batch. A thin shell over `stages.stage_d.run_stage_d`.

It depends on `image_evidence` by key only: data passes through Postgres, not an IO manager. The batch is its own
`card_ids` config when given, else the run's batch from the first asset's run config.
"""

from typing import Any

from dagster import (
    AssetExecutionContext,
    Config,
    MaterializeResult,
    MetadataValue,
    TableColumn,
    TableRecord,
    TableSchema,
    asset,
)
from pydantic import Field
from sqlalchemy import Engine

from stage_e_dagster.db.review.page import review_summary
from stage_e_dagster.db.review.queue import routed_among
from stage_e_dagster.db.runs import ledger
from stage_e_dagster.job_contracts import IMAGE_EVIDENCE, PRINTING_VOTES, batch_from_run_config
from stage_e_dagster.resources.consensus import Consensus
from stage_e_dagster.resources.database import AppDatabase
from stage_e_dagster.stages.stage_d import run_stage_d

ROUTED_SHOWN = 10
_SKIPS = TableSchema(columns=[TableColumn("calculator", "string"), TableColumn("reason", "string"),
                              TableColumn("cards", "int")])
_ROUTED = TableSchema(columns=[TableColumn("card", "int"), TableColumn("name", "string"),
                               TableColumn("file", "string"), TableColumn("why", "string")])
_HEADLINE = (
    "cards_processed", "votes_cast", "already_voted", "votes_removed", "routed_to_review", "review_markers_new",
    "cards_resolved", "newly_resolved", "cards_missing",
)


class PrintingVotesConfig(Config):
    """Which cards to process (empty: the run's batch) and an optional consensus policy for this run."""

    card_ids: list[int] = []
    policy: str | None = Field(default=None, description="funnel or machine-quorum; default: the `consensus` "
                                                         "resource's policy.")


def stage_d_metadata(counters: dict[str, Any]) -> dict[str, Any]:
    """Materialization metadata from run_stage_d's counters: headline numbers, skips per calculator, the cards no
    machine may vote on by reason (`ineligible`), speed."""
    metadata: dict[str, Any] = {name: MetadataValue.int(int(counters[name])) for name in _HEADLINE}
    metadata["skips"] = MetadataValue.json(counters["skips"])
    metadata["ineligible"] = MetadataValue.json(counters.get("ineligible", {}))
    rows = sorted(((calc, reason, n) for calc, reasons in counters["skips"].items() for reason, n in reasons.items()),
                  key=lambda row: (-row[2], row[0], row[1]))
    metadata["skip_reasons"] = MetadataValue.table(
        [TableRecord({"calculator": calc, "reason": reason, "cards": n}) for calc, reason, n in rows], schema=_SKIPS)
    metadata["policy"] = MetadataValue.text(str(counters["policy"]))
    metadata["elapsed_s"] = MetadataValue.float(float(counters["elapsed_s"]))
    metadata["cards_per_s"] = MetadataValue.float(float(counters["cards_per_s"]))
    return metadata


def review_metadata(engine: Engine, card_ids: list[int], page: str | None) -> dict[str, Any]:
    """How many cards await a person, a sample of this batch's cards routed to review with the reasons, and (with
    the review page's address) links to the page and to a sample of the cards, this batch's first."""
    with engine.connect() as conn:
        counts, sample = review_summary(conn, card_ids)
        routed = routed_among(conn, card_ids, ROUTED_SHOWN)
    metadata: dict[str, Any] = {
        "review_queue": MetadataValue.int(counts.awaiting),
        "review_queue_routed": MetadataValue.int(counts.routed),
        "routed_sample": MetadataValue.table(
            [TableRecord({"card": r.card_id, "name": r.name, "file": r.identifier, "why": ", ".join(r.why)})
             for r in routed], schema=_ROUTED),
    }
    if page:
        base = page.rstrip("/")
        metadata["review_page"] = MetadataValue.url(f"{base}/")
        lines = [f"- [card {e.card_id}: {e.name}]({base}/card/{e.card_id})" + (" (routed)" if e.routed else "")
                 for e in sample]
        metadata["review_sample"] = MetadataValue.md("\n".join(lines) or "The review queue is empty.")
    return metadata


@asset(key=PRINTING_VOTES, group_name="stage_d", deps=[IMAGE_EVIDENCE])
def printing_votes(
    context: AssetExecutionContext, config: PrintingVotesConfig, database: AppDatabase, consensus: Consensus
) -> MaterializeResult:
    """Machine votes and review routing for the batch's cards, then their consensus."""
    card_ids = list(config.card_ids) or list(batch_from_run_config(context.run.run_config).card_ids)
    engine = database.engine
    counters = run_stage_d(engine, card_ids, context.run.run_id, config.policy or consensus.policy)
    with engine.begin() as conn:
        ledger.merge_counters(conn, context.run.run_id, {"stage_d": counters})
    context.log.info(
        f"stage D: {counters['cards_processed']} cards, {counters['votes_cast']} votes cast, "
        f"{counters['already_voted']} already voted, {counters['routed_to_review']} routed to review"
    )
    metadata = {**stage_d_metadata(counters), **review_metadata(engine, card_ids, consensus.review_page_url)}
    return MaterializeResult(metadata=metadata)
