"""Stage C asset `image_evidence`: opens the batch's ledger row, checks the gates, fetches the remote cards' bytes
through the fleet-wide limiter, then extracts evidence on slot-holding workers whose number the load governor sets.

A remote source that locks us out during the fetch (several 403s in a row) has its trip recorded under this run,
and the run fails with the envelope's typed failure, so it halts like any envelope breach until a person
acknowledges the trip.

A passive run that finds an open envelope trip or streaming switched off closes its row `halted` before any work
(no OCR, no new trip), and so does a bulk run that finds a trip open without an operator's override. The run then
ends without materialising Stage D and E.
"""

from pathlib import Path

from dagster import (
    AssetExecutionContext,
    Config,
    MaterializeResult,
    MetadataValue,
    RetryRequested,
    TableColumn,
    TableRecord,
    TableSchema,
    asset,
)
from pydantic import Field

from stage_e_dagster.control.gates import run_start_gate
from stage_e_dagster.control.heartbeat import heartbeat_every
from stage_e_dagster.db.runs import ledger
from stage_e_dagster.domain.envelope import Breach
from stage_e_dagster.host import process_owner
from stage_e_dagster.job_contracts import CARD_SOURCES, IMAGE_EVIDENCE, MODES, TRIGGERS
from stage_e_dagster.resources.database import AppDatabase
from stage_e_dagster.resources.envelope import Envelope, EnvelopeTripped
from stage_e_dagster.resources.ocr_engine import OcrSettings
from stage_e_dagster.resources.ocr_slots import OcrSlots
from stage_e_dagster.resources.remote import RemoteFetch
from stage_e_dagster.resources.stream import StreamControl
from stage_e_dagster.stages.stage_c import run_stage_c
from stage_e_dagster.workers.ocr_pool import PoolSettings

_SKIPS = TableSchema(columns=[TableColumn("reason", "string"), TableColumn("cards", "int")])
FETCH_OUTCOMES = ("fetched", "cached", "served_by_copy", "throttled", "forbidden", "locked_out", "gone", "broken",
                  "broken_final", "requests", "bytes")
"""The fetch outcomes every materialization reports (as `fetch_<outcome>`, 0 when none), so each plots over time."""


def skip_table(skipped: dict[str, int]) -> MetadataValue:
    """Stage C's named skips as a table, most frequent first (an empty table when nothing was skipped)."""
    rows = sorted(skipped.items(), key=lambda item: (-item[1], item[0]))
    return MetadataValue.table([TableRecord({"reason": r, "cards": n}) for r, n in rows], schema=_SKIPS)


class ImageEvidenceConfig(Config):
    """The micro-batch: which cards, why the run started, and whether to recompute current evidence."""

    card_ids: list[int] = Field(default_factory=list, description="Card ids of the batch.")
    force: bool = Field(default=False, description="Recompute evidence even when it is current.")
    trigger: str = Field(default="manual", description=f"One of {', '.join(TRIGGERS)}.")
    mode: str = Field(default="passive", description=f"One of {', '.join(MODES)}; bulk runs skip the envelope.")
    trip_override: str | None = Field(
        default=None, description="Bulk runs only: go on although an envelope trip is open; this note is kept in "
                                  "the ledger row.")


@asset(key=IMAGE_EVIDENCE, group_name="stage_c", deps=[CARD_SOURCES], output_required=False, description=__doc__)
def image_evidence(
    context: AssetExecutionContext,
    config: ImageEvidenceConfig,
    database: AppDatabase,
    ocr_slots: OcrSlots,
    ocr: OcrSettings,
    envelope: Envelope,
    stream: StreamControl,
    remote: RemoteFetch,
):
    if config.trigger not in TRIGGERS or config.mode not in MODES:
        raise ValueError(f"trigger must be one of {TRIGGERS} and mode one of {MODES}")
    engine, run_id = database.engine, context.run.run_id
    with engine.begin() as conn:
        ledger.open_batch(conn, run_id, config.trigger, config.mode, config.card_ids, owner=process_owner())
    halted = run_start_gate(engine, config.mode, stream.enabled, config.trip_override)
    if halted:
        with engine.begin() as conn:
            ledger.close(conn, run_id, "halted", reason=f"halted before any work: {halted}")
        context.log.warning(f"halted before any work: {halted}")
        return
    if config.trip_override and config.mode == "bulk":
        with engine.begin() as conn:
            ledger.merge_counters(conn, run_id, {"trip_override": config.trip_override.strip()})
        context.log.warning(f"running although an envelope trip may be open: {config.trip_override.strip()}")
    trip_detail = {"job": context.run.job_name, "step": context.asset_key.to_user_string(), "mode": config.mode,
                   "trigger": config.trigger, "cards": len(config.card_ids)}
    envelope.check(mode=config.mode, run_id=run_id, detail=trip_detail)
    workers = ocr.workers or ocr_slots.local_workers
    settings = PoolSettings(
        workers=workers, engine=ocr.engine, rescue=ocr.rescue, slots=ocr_slots.worker_config(),
        holder=run_id, task_timeout_seconds=ocr.task_timeout_seconds,
        tessdata_prefix=Path(ocr.tessdata_prefix) if ocr.tessdata_prefix else None,
    )
    beat = heartbeat_every(engine, run_id)

    def on_tick(pids: list[int]) -> None:
        beat()
        envelope.maybe_check(mode=config.mode, worker_pids=pids, run_id=run_id, detail=trip_detail)

    counters = run_stage_c(
        engine, config.card_ids, run_id, settings, force=config.force, on_tick=on_tick, log=context.log.warning,
        governor=envelope.governor(workers), read_load=envelope.read_host_load,
        fetcher=remote.fetcher(engine, run_id, log=context.log.warning),
    )
    with engine.begin() as conn:
        ledger.merge_counters(conn, run_id, {"stage_c": counters.as_dict()})
    if counters.lockout:
        lockout = counters.lockout
        raise EnvelopeTripped(Breach("fetch_lockout", float(lockout["streak"]), float(lockout["limit"] - 1),
                                     {"source": lockout["source"], "host": lockout.get("host"),
                                      "trip": lockout["trip_id"]}))
    context.log.info(f"Stage C workers: {counters.workers_why}")
    if counters.throttled:
        attempt = context.retry_number
        if attempt < ocr.throttle_retries:
            wait = ocr.backoff(attempt)
            context.log.info(f"no OCR slot free; retry {attempt + 1}/{ocr.throttle_retries} in {wait} s")
            raise RetryRequested(max_retries=ocr.throttle_retries, seconds_to_wait=wait)
        reason = f"no OCR slot free after {ocr.throttle_retries} retries; cards are offered again shortly"
        with engine.begin() as conn:
            ledger.close(conn, run_id, "throttled", reason=reason)
        context.log.warning(reason)
        return
    yield MaterializeResult(metadata={
        "cards_in": counters.cards_in,
        "extracted": counters.extracted,
        "carried_forward": counters.carried_forward,
        "current": counters.current,
        "skipped_total": sum(counters.skipped.values()),
        "skip_reasons": skip_table(dict(counters.skipped)),
        "not_processed": counters.not_processed,
        "slots_held": counters.slots_held,
        "workers_started": counters.workers,
        "workers_reused": counters.workers_reused,
        "workers_peak": counters.workers_peak,
        "workers_cap": counters.workers_cap,
        "governor_steps": counters.governor_steps,
        "workers_why": counters.workers_why,
        "load_target": counters.load_target,
        "load_peak": counters.load_peak,
        "cards_per_second": counters.cards_per_second,
        "elapsed_seconds": round(counters.elapsed_seconds, 2),
        **{f"fetch_{name}": int(counters.fetch.get(name, 0)) for name in FETCH_OUTCOMES},
    })
