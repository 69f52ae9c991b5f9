"""Drill 3, the incident race: concurrent `micro_batch` runs over overlapping cards, through the real job.

The original failure: eight streamed batches over overlapping cards, seven of which died on a unique-constraint
violation. Here `runs` separate processes (as the run launcher starts them) each execute the production `micro_batch`
job (`stage_e_dagster.definitions`) on a passive batch that shares cards with the others, all released at the same
moment, against one Postgres and one Dagster storage. While they run, the OCR slot holders in `pg_locks` are
sampled. The oracle is the database's final state, checked against the rules:

- every run succeeded and its ledger row reads `completed`; no process, Dagster event or server log line shows a
  unique-constraint violation (IntegrityError);
- one vote per (card, voter), one evidence row per card, no abstention logged twice, and the stored votes are
  exactly the ones a single sequential pass over the stored evidence decides;
- every card has current evidence (or a Stage C skip) and was decided by the current calculators;
- never more OCR slot holders than the cap; each run's Stage C counters add up to its batch, and OCR ran once per
  distinct content across all runs (no card was extracted twice).

`python -m drills race racers GATE` starts the racing runs (the child processes).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from drills import verdict
from testkit import live
from testkit.corpus import demo_corpus_cli
from testkit.live import Home, wait_for
from testkit.oracle import assert_nothing_twice

UNIQUE_VIOLATION = "duplicate key value violates unique constraint"
_SLOT_HOLDERS = """
SELECT count(*) FROM pg_locks
WHERE locktype = 'advisory' AND granted AND objsubid = 2 AND classid = %s::oid
"""


def overlapping_batches(ids: list[int], runs: int, size: int) -> list[list[int]]:
    """`runs` batches of `size` cards from starts spread evenly over `ids` (wrapping), so every card is in
    `runs * size / len(ids)` batches, give or take one."""
    starts = [round(i * len(ids) / runs) for i in range(runs)]
    return [sorted({ids[(start + k) % len(ids)] for k in range(size)}) for start in starts]


def prepare(home: Home, cards: int, printings: int, seed: int = 5) -> list[int]:
    """A demo catalogue and `cards` scans, ingested. The card ids, in order."""
    demo_corpus_cli(home, cards, printings, seed=seed, degraded=None, workers=None)
    return [int(row[0]) for row in home.rows("SELECT id FROM card ORDER BY id")]


def race(home: Home, figures: dict[str, Any], *, cards: int, runs: int, batch: int, slots: int, printings: int,
         timeout: float) -> None:
    """Run the drill on `home` (a fresh STAGE_E_HOME); fills `figures`, raises AssertionError on a broken rule."""
    from stage_e_dagster.db.slots.holders import NAMESPACE

    started = time.monotonic()
    ids = prepare(home, cards, printings)
    batches = overlapping_batches(ids, runs, batch)
    per_card = Counter(c for b in batches for c in b)
    figures.update(cards=len(ids), runs=runs, batch=batch, slot_cap=slots,
                   min_batches_per_card=min(per_card[c] for c in ids))
    figures["setup_s"] = round(time.monotonic() - started, 1)
    assert figures["min_batches_per_card"] >= 2, "a card in fewer than two batches races nothing: more runs or size"

    env = {**home.env, "STAGE_E_STREAMING": "on", "STAGE_E_OCR_MAX_SLOTS": str(slots),
           "STAGE_E_OCR_WAIT_SECONDS": str(int(timeout)), "STAGE_E_HOST_LOAD_CEILING": "1000",
           "STAGE_E_RSS_CEILING_MB": "100000"}
    gate = home.root / "race-gate"
    gate.mkdir()
    (gate / "batches.json").write_text(json.dumps(batches))
    log_start = home.server.log_file.stat().st_size if home.server.log_file.exists() else 0
    loader = subprocess.Popen([sys.executable, "-m", "drills", "race", "racers", str(gate)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    peak_holders = samples = 0
    try:
        wait_for(lambda: len(list(gate.glob("ready-*"))) == runs or loader.poll() is not None,
                 timeout, "every racer to load the job")
        (gate / "go").touch()
        released = time.monotonic()
        deadline = released + timeout
        while loader.poll() is None:
            assert time.monotonic() < deadline, f"the race did not end within {timeout:.0f} s"
            holders = home.rows(_SLOT_HOLDERS, (NAMESPACE,))[0][0]
            peak_holders, samples = max(peak_holders, holders), samples + 1
            time.sleep(0.2)
        figures["race_s"] = round(time.monotonic() - released, 1)
        said = loader.communicate()[0]
    finally:
        if loader.poll() is None:
            loader.kill()  # its racers die with it (PR_SET_PDEATHSIG)
            loader.wait()
    figures.update(peak_slot_holders=peak_holders, slot_samples=samples)
    assert loader.returncode == 0, f"the racers' parent exited {loader.returncode}: {said.strip()[-800:]}"
    outputs = [((gate / f"rc-{i}").read_text(), (gate / f"out-{i}").read_text(errors="replace"),
                (gate / f"err-{i}").read_text(errors="replace")) for i in range(runs)]

    reports = []
    for i, (code, out, err) in enumerate(outputs):
        lines = [line for line in out.splitlines() if line.startswith("{")]
        assert code == "0" and lines, f"racer {i} exited {code}: {err.strip()[-800:]}"
        reports.append(json.loads(lines[-1]))
        assert "IntegrityError" not in err and UNIQUE_VIOLATION not in err, f"racer {i}: {err.strip()[-800:]}"
    failed = [r for r in reports if not r["success"]]
    figures["failed_runs"] = len(failed)
    assert not failed, f"{len(failed)} of {runs} runs failed: {failed[0]['errors'][:2]}"
    assert not any(r["integrity_errors"] for r in reports), "an IntegrityError in a run's events"
    server_log = home.server.log_file.read_bytes()[log_start:].decode(errors="replace")
    figures["unique_violations"] = server_log.count(UNIQUE_VIOLATION)
    assert figures["unique_violations"] == 0, "the server logged a unique-constraint violation"
    assert peak_holders <= slots, f"{peak_holders} OCR slot holders at once, cap {slots}"

    check_final_state(home, ids, batches, reports, figures)


def check_final_state(home: Home, ids: list[int], batches: list[list[int]], reports: list[dict],
                      figures: dict[str, Any]) -> None:
    """The rules, checked on what the database holds after the race."""
    from stage_e_dagster.db.core.engine import get_engine
    from stage_e_dagster.db.judgement.stage_d_inputs import load_stage_d_inputs
    from stage_e_dagster.domain.stage_d import plan_batch
    from stage_e_dagster.domain.work import DECIDED_BY, STAGE_C_ID

    rows = home.rows("SELECT run_id, status, card_ids, counters FROM dispatch_ledger")
    ledger = {r[0]: r for r in rows}
    run_ids = [r["run_id"] for r in reports]
    statuses = Counter(ledger[run][1] if run in ledger else "missing" for run in run_ids)
    figures["ledger"] = ",".join(f"{n}{s[0]}" for s, n in sorted(statuses.items()))
    assert statuses == Counter({"completed": len(run_ids)}), f"ledger statuses {dict(statuses)}"
    assert len(rows) == len(run_ids), "a ledger row that no racer owns"

    extracted = skipped = 0
    for run, ids_ in zip(run_ids, batches, strict=True):
        counters = ledger[run][3]
        c = counters["stage_c"]
        accounted = (c["extracted"] + c["current"] + c["missing"] + c["copies_carried"] + sum(c["skipped"].values())
                     + c["not_processed"])
        assert c["cards_in"] == len(ids_) == accounted, f"run {run}: stage_c counters {c} for {len(ids_)} cards"
        assert c["not_processed"] == 0 and not c["throttled"], f"run {run} left cards: {c}"
        assert c["workers_peak"] <= c["workers_cap"], f"run {run}: {c['workers_peak']} workers over its cap"
        assert counters["stage_d"]["cards"] == len(ids_), f"run {run}: stage_d {counters['stage_d']}"
        assert "stage_e" in counters, f"run {run} has no Stage E counters"
        extracted += c["extracted"]
        skipped += sum(c["skipped"].values())
    contents = home.rows("SELECT count(DISTINCT content_sha256) FROM card")[0][0]
    figures["ocr_per_content"] = f"{extracted + skipped}/{contents}"
    if extracted + skipped != contents:
        by_run = dict(home.rows("SELECT run_id, count(*) FROM image_evidence GROUP BY 1"))
        counted = {run[-8:]: (ledger[run][3]["stage_c"]["extracted"], by_run.get(run, 0),
                              ledger[run][3]["stage_c"]["current"], ledger[run][3]["stage_c"]["copies_carried"])
                   for run in run_ids}
        restarts = {r["run_id"][-8:]: r["restarts"] for r in reports if r["restarts"]}
        raise AssertionError(
            f"{extracted} extractions and {skipped} skips across the runs for {contents} distinct contents; per run "
            f"(extracted, evidence rows stored, current, carried): {counted}; step restarts: {restarts}")

    unfinished = home.rows("""
        SELECT c.id FROM card c
        WHERE NOT EXISTS (SELECT 1 FROM image_evidence e WHERE e.card_id = c.id AND e.content_sha256 = c.content_sha256
                          AND e.decided_by = %s)
          AND NOT EXISTS (SELECT 1 FROM card_scan_log l WHERE l.card_id = c.id AND l.anonymous_id = %s
                          AND l.evidence_key = c.content_sha256)""", (DECIDED_BY, STAGE_C_ID))
    assert not unfinished, f"cards without decided evidence or a skip: {unfinished[:10]}"

    assert_nothing_twice(home)  # one vote per (card, voter), one evidence row per card, no abstention twice
    stored = sorted(home.rows("SELECT card_id, anonymous_id, printing_id, is_no_match FROM card_printing_tag"))

    with get_engine(home.url).connect() as conn:
        inputs = load_stage_d_inputs(conn, ids)
    plan = plan_batch([inputs.cards[i] for i in ids if i in inputs.cards], inputs.evidence, inputs.candidates,
                      inputs.expansions)
    expected = sorted((g.card_id, g.anonymous_id, v.printing_id, v.is_no_match) for g in plan.groups for v in g.votes)
    assert stored == expected, "the stored votes differ from a single sequential pass over the stored evidence"
    inserted = sum(ledger[run][3]["stage_d"]["vote_groups_inserted"] for run in run_ids)
    replaced = sum(ledger[run][3]["stage_d"]["vote_groups_replaced"] for run in run_ids)
    absorbed = sum(ledger[run][3]["stage_d"]["race_absorbed"] for run in run_ids)
    figures.update(votes=len(stored), vote_groups_inserted=inserted, race_absorbed=absorbed)
    assert inserted == len({(c, v) for c, v, _, _ in stored}) and replaced == 0, (
        f"{inserted} vote groups inserted and {replaced} replaced across the runs for {len(stored)} votes")


def _racers(gate: Path) -> None:
    """The racing runs: load the production job once, then fork one process per batch of `gate/batches.json`
    (forked, each is a process of its own with its own Dagster instance and connections, as a launched run is; the
    job is not loaded eight times over). Each says ready, waits for the gate and executes its batch (`_racer`); its
    stdout, stderr and exit code end in `gate/out-N`, `gate/err-N` and `gate/rc-N`."""
    from dagster import DagsterInstance

    from stage_e_dagster.in_process import QUIET  # noqa: F401 - imported once here, not in every racer
    from stage_e_dagster.job_contracts import MICRO_BATCH
    from stage_e_dagster.runtime import prepare_dagster_environment

    prepare_dagster_environment()
    from stage_e_dagster.definitions import defs

    job = defs.resolve_job_def(MICRO_BATCH)
    with DagsterInstance.get():
        pass  # creates Dagster's run storage once, before the racers open it together
    batches = json.loads((gate / "batches.json").read_text())
    sys.stdout.flush()
    sys.stderr.flush()
    children = {}
    for index, card_ids in enumerate(batches):
        pid = os.fork()
        if pid == 0:
            _child(gate, index, job, card_ids)  # never returns
        children[pid] = index
    while children:
        pid, status = os.wait()
        (gate / f"rc-{children.pop(pid)}").write_text(str(os.waitstatus_to_exitcode(status)))


def _child(gate: Path, index: int, job: Any, card_ids: list[int]) -> None:
    """One forked racer: its output to files, dies with its parent, runs `_racer`, exits without the parent's
    exit handlers."""
    code = 1
    try:
        import ctypes
        import signal
        import traceback

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)
        for stream, name in ((1, "out"), (2, "err")):
            with open(gate / f"{name}-{index}", "w") as sink:
                os.dup2(sink.fileno(), stream)
        try:
            _racer(gate, index, job, card_ids)
            code = 0
        except BaseException:  # noqa: BLE001 - any error is this racer's failure, reported in its err file
            traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _racer(gate: Path, index: int, job: Any, card_ids: list[int]) -> None:
    """One racing run: say ready, wait for the gate, execute the batch, report one JSON line."""
    from dagster import DagsterEventType, DagsterInstance

    from stage_e_dagster.in_process import QUIET
    from stage_e_dagster.job_contracts import BatchSpec

    spec = BatchSpec(tuple(card_ids), trigger="card-event", mode="passive")
    with DagsterInstance.get() as instance:
        (gate / f"ready-{index}").touch()
        while not (gate / "go").exists():
            time.sleep(0.05)
        result = job.execute_in_process(run_config={**spec.run_config(), **QUIET}, instance=instance,
                                        raise_on_error=False, tags=spec.tags())
        errors = [str(e.message) for e in result.all_events
                  if e.event_type in (DagsterEventType.STEP_FAILURE, DagsterEventType.RUN_FAILURE)]
        restarts = sum(e.event_type in (DagsterEventType.STEP_UP_FOR_RETRY, DagsterEventType.STEP_RESTARTED)
                       for e in result.all_events)
        text = " ".join(str(e.message) for e in result.all_events)
    print(json.dumps({"run_id": result.run_id, "success": result.success, "errors": errors, "restarts": restarts,
                      "integrity_errors": text.count("IntegrityError") + text.count(UNIQUE_VIOLATION)}), flush=True)


def run(figures: dict[str, Any] | None = None, *, cards: int = 16, runs: int = 8, batch: int = 6, slots: int = 2,
        printings: int = 60, timeout: float = 600) -> dict[str, Any]:
    """The race on a throwaway home; returns the figures (raises AssertionError on a broken rule)."""
    figures = {} if figures is None else figures
    with live.home() as home:
        race(home, figures, cards=cards, runs=runs, batch=batch, slots=slots, printings=printings, timeout=timeout)
    figures["host_load_1m"] = round(os.getloadavg()[0], 1)
    return figures


def main(argv: list[str] | None = None) -> None:
    if argv and argv[0] == "racers":  # the racing runs, started by `race` in a process of their own
        _racers(Path(argv[1]))
        return
    parser = verdict.parser_for("race", __doc__)
    parser.add_argument("--cards", type=int, default=48)
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--batch", type=int, default=18)
    parser.add_argument("--slots", type=int, default=2)
    verdict.drill_main("race", run, parser, argv)
