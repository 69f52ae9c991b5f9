"""Drill 5, hostile files at Stage C, not only at ingest.

A demo source gets the hostile corpus (`drills/corpus.py`): names that are not UTF-8, names with a newline, NFC/NFD
twins, a decompression bomb and a FIFO at ingest; after ingest, files replaced by a symlink to outside the source, a
symlink to /dev/zero, a sparse file grown to several GB, a FIFO, a directory turned into a symlink, and a stored
path that leads outside the source. The real `stage-e ingest` and `stage-e run` (the production `micro_batch` job)
process it. Then, from the database and the process table:

- every hostile file ended as it must: evidence, a named Stage C skip in the skip log, or a refusal at ingest;
  nothing outside the source was read (a read would show as `content-changed`, never as `file-symlink`);
- every batch completed (no failed ledger row), no OCR slot is held and no process of the drill is left;
- `stage-e catalog import` of catalogues with a giant string, deep nesting, a huge array and a flood of scalars
  stops with a clear message and a peak memory near that of a normal import.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from typing import Any

import psutil

from drills import corpus, verdict
from testkit import live
from testkit.corpus import demo_corpus_cli
from testkit.live import STAGE_E, Home

_PEAK = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
         "print(r.stdout + r.stderr); print('peak_kb', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); "
         "sys.exit(r.returncode)")


def measured(home: Home, *args: str, timeout: float = 600) -> tuple[int, str, int]:
    """Run `stage-e ARGS`; its exit code, output and peak resident memory (KB)."""
    done = subprocess.run([sys.executable, "-c", _PEAK, STAGE_E, *args], env=home.env, capture_output=True,
                          text=True, timeout=timeout)
    *text, last = done.stdout.rstrip().splitlines() or ["peak_kb 0"]
    return done.returncode, "\n".join(text) + done.stderr, int(last.split()[-1]) if last.startswith("peak_kb") else 0


def _drill_processes(home: Home) -> list[str]:
    """Processes still running with this drill's STAGE_E_HOME in their environment, its Postgres server aside."""
    left = []
    for proc in psutil.process_iter(["pid", "name", "cmdline"]):
        try:
            if (proc.pid != os.getpid() and not (proc.info["name"] or "").startswith("postgres")
                    and proc.status() != psutil.STATUS_ZOMBIE
                    and proc.environ().get("STAGE_E_HOME") == str(home.root)):
                left.append(f"{proc.pid} {' '.join(proc.info['cmdline'] or [])[:100]}")
        except psutil.Error:
            continue
    return left


def hostile(home: Home, figures: dict[str, Any], *, good: int, grown_gb: float, catalogue_mb: int,
            batch: int = 5) -> None:
    """Run the drill on `home` (a fresh STAGE_E_HOME) with `stage-e run` in batches of `batch` cards; fills
    `figures`, raises AssertionError on a broken rule."""
    started = time.monotonic()
    data = demo_corpus_cli(home, good, printings=40, seed=3, degraded=None, workers=None, catalogue=False,
                           source=None)
    code, out, normal_kb = measured(home, "catalog", "import", str(data / "catalog.json"), "--symbols",
                                    str(data / "symbols"))
    assert code == 0, out
    scans = data / "scans"
    good_scans = sorted(p.relative_to(scans).as_posix() for p in scans.rglob("*") if p.is_file())
    expected = corpus.write_scans(scans, scans / good_scans[0])
    expected.update(dict.fromkeys(good_scans, corpus.EVIDENCE))

    code, out, _ = measured(home, "ingest", str(scans), "--source", "demo", timeout=300)
    assert code == 0, f"stage-e ingest failed on the hostile corpus: {out[-1500:]}"
    refusals = [line for line in out.splitlines() if line.lstrip().startswith("refused ")]
    figures["refused_at_ingest"] = len(refusals)
    for identifier, outcome in expected.items():
        if outcome.startswith("refused: "):
            assert f"refused {identifier}: {outcome.removeprefix('refused: ')}" in out, (identifier, out[-1500:])
    wanted_refusals = sum(outcome.startswith("refused: ") for outcome in expected.values())
    assert len(refusals) == wanted_refusals, f"ingest refused other files too: {refusals}"
    corpus.replace_after_ingest(scans, home.root / "outside", int(grown_gb * 1024**3))
    home.rows("UPDATE card SET identifier = %s WHERE identifier = %s RETURNING id",
          (corpus.ESCAPED, "Escape [XLN].png"))
    expected[corpus.ESCAPED] = expected.pop("Escape [XLN].png")

    run_started = time.monotonic()
    env = {**home.env, "STAGE_E_OCR_MAX_SLOTS": "1"}
    done = subprocess.run([STAGE_E, "run", "--batch-size", str(batch)], env=env, capture_output=True, text=True,
                          timeout=900)
    figures["run_s"] = round(time.monotonic() - run_started, 1)
    assert done.returncode == 0, f"stage-e run failed: {(done.stdout + done.stderr)[-1500:]}"
    check_outcomes(home, expected, figures)
    # The OCR forkserver exits when it sees its owner gone, a moment after `stage-e run` returns.
    deadline = time.monotonic() + 30
    while (left := _drill_processes(home)) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not left, f"processes left behind 30 s after the run: {left}"

    check_catalogues(home, normal_kb, catalogue_mb, figures)
    figures["total_s"] = round(time.monotonic() - started, 1)


def check_outcomes(home: Home, expected: dict[str, str], figures: dict[str, Any]) -> None:
    """Each card's end in the database against `expected`; the ledger and the OCR slots."""
    from stage_e_dagster.domain.work import STAGE_C_ID

    rows = home.rows("""
        SELECT c.identifier,
               EXISTS (SELECT 1 FROM image_evidence e WHERE e.card_id = c.id AND e.content_sha256 = c.content_sha256),
               (SELECT string_agg(l.skip_reason, ',' ORDER BY l.skip_reason) FROM card_scan_log l
                WHERE l.card_id = c.id AND l.anonymous_id = %s)
        FROM card c""", (STAGE_C_ID,))
    actual = {identifier: corpus.EVIDENCE if has_evidence else (skips or "nothing")
              for identifier, has_evidence, skips in rows}
    wanted = {k: v for k, v in expected.items() if not v.startswith("refused: ")}
    wrong = {k: (actual.get(k, "no card"), v) for k, v in wanted.items() if actual.get(k, "no card") != v}
    assert not wrong, f"hostile files that ended wrong (got, wanted): {wrong}"
    assert set(actual) == set(wanted), f"unexpected cards: {set(actual) ^ set(wanted)}"
    figures["cards"] = len(actual)
    figures["skips"] = len([v for v in actual.values() if v != corpus.EVIDENCE])

    statuses = dict(home.rows("SELECT status, count(*) FROM dispatch_ledger GROUP BY status"))
    figures["ledger"] = ",".join(f"{n}{s[0]}" for s, n in sorted(statuses.items()))
    assert set(statuses) == {"completed"}, f"ledger statuses {statuses}"
    from stage_e_dagster.db.slots.holders import NAMESPACE

    held = home.rows("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = %s::oid",
                 (NAMESPACE,))[0][0]
    assert held == 0, f"{held} OCR slots still held after the run"


def check_catalogues(home: Home, normal_kb: int, payload_mb: int, figures: dict[str, Any]) -> None:
    """Each hostile catalogue is refused with its message, at a peak memory near a normal import's."""
    directory = home.root / "catalogues"
    peaks = {}
    for name, message in corpus.write_catalogues(directory, payload_mb * 1024 * 1024).items():
        code, out, peak_kb = measured(home, "catalog", "import", str(directory / name))
        assert code != 0, f"{name} was imported: {out[-500:]}"
        assert message in out and "Traceback" not in out, f"{name}: {out[-800:]}"
        peaks[name.removesuffix(".json")] = peak_kb
        grew_mb = (peak_kb - normal_kb) / 1024
        assert grew_mb < max(48, payload_mb / 4), (
            f"{name} ({payload_mb} MB) raised the import's peak memory by {grew_mb:.0f} MB")
    figures["catalog_peak_mb"] = round(max(peaks.values()) / 1024)
    figures["catalog_normal_mb"] = round(normal_kb / 1024)


def run(figures: dict[str, Any] | None = None, *, good: int = 4, grown_gb: float = 4, catalogue_mb: int = 64,
        batch: int = 5) -> dict[str, Any]:
    """The drill on a throwaway home; returns the figures (raises AssertionError on a broken rule)."""
    figures = {} if figures is None else figures
    with live.home() as home:
        hostile(home, figures, good=good, grown_gb=grown_gb, catalogue_mb=catalogue_mb, batch=batch)
    figures["host_load_1m"] = round(os.getloadavg()[0], 1)
    return figures


def main(argv: list[str] | None = None) -> None:
    parser = verdict.parser_for("hostile", __doc__)
    parser.add_argument("--good", type=int, default=8, help="good demo scans beside the hostile corpus")
    parser.add_argument("--grown-gb", type=float, default=16, help="size of the sparse file a scan grows to")
    parser.add_argument("--catalogue-mb", type=int, default=256, help="size of each hostile catalogue")
    parser.add_argument("--batch", type=int, default=5, help="cards per batch of `stage-e run`")
    verdict.drill_main("hostile", run, parser, argv)
