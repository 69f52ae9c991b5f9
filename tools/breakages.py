"""The breakage table: each named, deliberate breakage applied in turn to a scratch copy of this tree, the tests
that should catch it run there, and the verdict reported: `caught` (a test failed), `MISSED` (they all passed),
`error` (the breakage did not apply, or the tests could not run). Exit code 0 only when every one was caught.

The real tree is never touched: the copy is made from `git ls-files` (committed and uncommitted changes alike) in a
temp dir, with an install of its own. That install is a virtualenv whose one path file puts the copy first and
this tree's virtualenv's packages after it, with the editable finder of this tree dropped; its console scripts are
this virtualenv's, re-pointed at it, and its data files (Tesseract's model) are this virtualenv's. So the tests,
`stage-e`, `dg dev` and the OCR workers they start all import the broken copy. First the chosen breakages' tests run
once on the unbroken copy and must pass (else nothing is judged: a test failing for another reason proves nothing);
then each breakage is applied, its tests run, and it is undone (from the pristine file) before the next.

Usage: `python tools/breakages.py [NAME ...]` (`make breakages`); `--list` prints the table's rows.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Breakage:
    """A named breakage: text replacements in one file, and the tests (pytest node ids) that must catch it."""

    name: str
    path: str
    edits: tuple[tuple[str, str], ...]
    tests: tuple[str, ...]


BREAKAGES = (
    Breakage(
        "the run-start trip gate removed", "stage_e_dagster/assets/stage_c.py",
        (("halted = run_start_gate(engine, config.mode, stream.enabled, config.trip_override)", "halted = None"),),
        ("tests/db/test_run_gates.py", "tests/db/test_micro_batch_failures.py::"
         "test_envelope_breach_halts_the_stream_until_acknowledged")),
    Breakage(
        "the reaper disabled", "stage_e_dagster/control/reaper.py",
        (('''    ended: list[str] = []
    if instance is not None:
        fail_unopened_runs''', '''    ended: list[str] = []
    if True:
        return []
    if instance is not None:
        fail_unopened_runs'''),),
        ("tests/db/test_stranded_runs.py", "tests/db/test_ledger_liveness.py")),
    Breakage(
        "ON CONFLICT DO NOTHING turned into a plain insert", "stage_e_dagster/db/judgement/votes.py",
        (('"ON CONFLICT DO NOTHING RETURNING card_id, anonymous_id"', '"RETURNING card_id, anonymous_id"'),),
        ("tests/db/test_votes.py::test_lost_insert_race_is_absorbed_not_raised",)),
    Breakage(
        "the slot cap ignored", "stage_e_dagster/db/slots/cap.py",
        (("        count = self.slot_count\n        keys = [self.lock_key(slot) for slot in range(count)]",
          "        count = MAX_SLOTS\n        keys = [self.lock_key(slot) for slot in range(count)]"),),
        ("tests/db/test_ocr_slots.py::test_cap_of_two_refuses_a_third_session_until_one_releases",
         "tests/db/test_ocr_slots.py::test_eight_processes_never_exceed_a_cap_of_two")),
    Breakage(
        "catalogue reopen skipped", "stage_e_dagster/db/catalog/importer.py",
        (("return len(changed), reopen_for_stage_d(conn, cards_to_reopen(conn, candidate_names(touched), "
          "lacking=True))", "return len(changed), set()"),),
        ("tests/db/test_catalog_reopen.py",)),
    Breakage(
        "identity-group copying off", "stage_e_dagster/stages/stage_c_copies.py",
        (("    def carry(self, card_ids: Collection[int]) -> None:\n        if not self.force:",
          "    def carry(self, card_ids: Collection[int]) -> None:\n        if False:"),
         ("        followers = [c for c in self.groups[sha] if c != result.card_id]", "        followers = []")),
        ("tests/db/test_identity_groups.py::test_one_batch_extracts_each_image_once_and_carries_it_to_its_copies",)),
    Breakage(
        "machine votes allowed to settle a card alone", "stage_e_dagster/domain/consensus.py",
        (('    if policy == "machine-quorum":\n        agreed = _quorum_outcome(unique, human_outcomes)',
          '    if policy in POLICIES:\n        agreed = _quorum_outcome(unique, human_outcomes)'),),
        ("tests/unit/test_consensus.py", "tests/db/test_asset_checks.py")),
    Breakage(
        "the collector reader's catalogue check bypassed", "stage_e_dagster/domain/evidence/read_catalog.py",
        (("            if (code, norm) in owned and _total_fits(total, code, catalog):", "            if True:"),),
        ("tests/unit/test_evidence_read_catalog.py",)),
    Breakage(
        "the review page's CSRF check removed", "stage_e_dagster/review_web/app.py",
        (('        if session is None or not tokens_equal(fields.get("csrf"), session.csrf):',
          "        if session is None:"),),
        ("tests/review/test_review_web.py::test_forms_from_another_site_or_without_the_csrf_token_change_nothing",)),
    Breakage(
        "a hostile symlink followed", "stage_e_dagster/domain/scan_files.py",
        (("            info = os.stat(parts[-1], dir_fd=parent, follow_symlinks=False)",
          "            info = os.stat(parts[-1], dir_fd=parent, follow_symlinks=True)"),
         ("os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NOCTTY",
          "os.open(parts[-1], os.O_RDONLY | os.O_NOCTTY")),
        ("tests/db/test_read_scan.py",)),
    Breakage(
        "OCR workers started without the OpenMP thread limit", "stage_e_dagster/workers/ocr_crew.py",
        (("    if _context is None:\n        limit_ocr_threads()\n", "    if _context is None:\n"),),
        ("tests/db/test_stage_c_processes.py::test_ocr_workers_run_with_one_openmp_thread",)),
    Breakage(
        "the default host-load ceiling lowered to the CPU count", "stage_e_dagster/host.py",
        (('    """The envelope\'s default host-load ceiling: twice the CPU count."""\n    return 2.0 * cpus()',
          '    """The envelope\'s default host-load ceiling: twice the CPU count."""\n    return 1.0 * cpus()'),),
        ("tests/db/test_governor.py::test_the_defaults_never_trip_under_the_work_they_were_sized_for",)),
    Breakage(
        "claims no longer serialised", "stage_e_dagster/db/runs/ledger.py",
        (('    conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _CLAIM_LOCK_KEY})\n', ""),),
        ("tests/db/test_claims.py::test_concurrent_claims_never_share_a_card_and_take_every_one",)),
    Breakage(
        "a draining run ignores an open trip", "stage_e_dagster/control/drain.py",
        (("            halted = halt_reason()\n", "            halted = None\n"),),
        ("tests/unit/test_drain_loop.py::test_an_open_trip_stops_it_before_the_next_claim",)),
    Breakage(
        "card backs owed Stage D like any card", "stage_e_dagster/db/work/rule.sql",
        (("""        WHEN e.card_id IS NOT NULL AND c.kind = 'cardback'
             AND NOT EXISTS (SELECT 1 FROM card_printing_tag t WHERE t.card_id = c.id
                             AND t.anonymous_id LIKE 'stage-d-%') THEN NULL
""", ""),),
        ("tests/db/test_work_queue.py::test_the_queue_and_the_full_rule_agree_whatever_is_written",)),
    Breakage(
        "tokens and cards voted onto any printing of their name", "stage_e_dagster/domain/calculators/slow_path.py",
        (("    candidates = [p for p in candidates if printing_fits(card.kind, p.layout, p.set_type)]\n", ""),),
        ("tests/unit/test_calculators_kinds.py", "tests/db/test_eligibility_e2e.py::"
         "test_each_kind_gets_its_eligibility_and_its_reason")),
    Breakage(
        "the fetch limiter's shared turns not spaced", "stage_e_dagster/remote/limiter.py",
        (("granted = pace.grant(conn, self.interval)", "granted = pace.grant(conn, 0.0)"),),
        ("tests/db/test_remote_limiter.py::test_two_processes_share_one_rate",)),
    Breakage(
        "a throttled fetch not slowing the fleet", "stage_e_dagster/remote/limiter.py",
        (("                    if kind == THROTTLED:\n                        factor = pace.throttled(",
          "                    if False:\n                        factor = pace.throttled("),),
        ("tests/db/test_remote_limiter.py::test_a_throttled_response_halves_the_shared_pace_once_and_clean_ones_"
         "restore_it",
         "tests/db/test_remote_fetch.py::test_a_throttled_card_is_deferred_never_failed_and_the_shared_pace_halves_"
         "then_recovers")),
    Breakage(
        "fetch turns granted before a lockout still sent", "stage_e_dagster/stages/stage_c_fetch.py",
        (("timeout_seconds=self.settings.timeout_seconds, stopped=self._stop.is_set)",
          "timeout_seconds=self.settings.timeout_seconds)"),),
        ("tests/db/test_remote_fetch.py::test_requests_waiting_for_their_turn_when_a_lockout_trips_are_never_sent",)),
    Breakage(
        "a 403 judged without waiting for a lockout being recorded", "stage_e_dagster/db/intake/fetch_state.py",
        (('    conn.execute(text("SELECT id FROM source WHERE id = :s FOR UPDATE"), {"s": source_id})\n', ""),),
        ("tests/db/test_remote_fetch.py::test_a_403_judged_while_another_process_records_the_lockout_is_deferred_not_"
         "skipped",)),
    Breakage(
        "the catalogue version left alone by changes",
        "stage_e_dagster/db/core/migrations/versions/0014_catalog_version.py",
        (("IF EXISTS (SELECT 1 FROM changed_rows) THEN", "IF false THEN"),),
        ("tests/db/test_catalog_version.py",)),
    Breakage(
        "the kept ReadCatalog kept whatever the version", "stage_e_dagster/db/catalog/read.py",
        (("if kept is not None and kept[0] == version:", "if kept is not None:"),),
        ("tests/db/test_catalog_version.py::test_the_kept_read_catalogue_is_reused_until_an_import_changes_it",)),
    Breakage(
        "name lookups read every language's record", "stage_e_dagster/db/catalog/lookup.py",
        (("\"(p.lang IS NULL OR p.lang = 'en' OR NOT EXISTS (\"", "\"(true OR NOT EXISTS (\""),),
        ("tests/db/test_all_cards_import.py",)),
    Breakage(
        "printings stored without their faces' normalised names", "stage_e_dagster/domain/scryfall.py",
        (("face_names_normalised=None if face_names is None else", "face_names_normalised=None if True else"),),
        ("tests/db/test_all_cards_import.py::test_each_layouts_names_are_found_once_per_printing",)),
    Breakage(
        "the packed name table stops at the first occupied slot", "stage_e_dagster/domain/evidence/read_catalog.py",
        (("                return index\n            slot = (slot + 1) & mask",
          "                return index\n            return None"),),
        ("tests/unit/test_read_catalog_packed.py",)),
    Breakage(
        "near-identical set symbols allowed to decide", "stage_e_dagster/domain/calculators/matching.py",
        (("    out = set(kept)\n", "    return set(kept)\n"),),
        ("tests/unit/test_calculators_era.py", "tests/db/test_era_stage_d.py")),
    Breakage(
        "prefixed collector numbers not read", "stage_e_dagster/domain/evidence/parse.py",
        (("(?P<prefix>[A-Z]{1,2})", "(?P<prefix>[^\\s\\S]{1,2})"),),
        ("tests/unit/test_evidence_forms.py",)),
    Breakage(
        "the era calculator blind to the copyright year", "stage_e_dagster/domain/calculators/era.py",
        (('CHECKS: dict[str, Check] = {"year": year_check, ', 'CHECKS: dict[str, Check] = {'),),
        ("tests/unit/test_calculators_era.py",)),
    Breakage(
        "a draining run whose process died left started", "stage_e_dagster/control/reaper.py",
        (("        if owner and owner_is_gone(owner):", "        if False:"),),
        ("tests/db/test_drain_runs.py::test_a_draining_run_whose_process_is_gone_is_failed_and_no_longer_holds_the_stream",)),
    Breakage(
        "surplus draining runs kept working", "stage_e_dagster/control/run_queue.py",
        (("    return run_id in ordered and ordered.index(run_id) >= drain_runs", "    return False"),),
        ("tests/db/test_drain_runs.py::test_the_draining_runs_beyond_the_limit_are_surplus_oldest_first",)),
    Breakage(
        "an acknowledged failure-rate trip's failures judged again", "stage_e_dagster/db/runs/image_loads.py",
        (("        WHERE bar = :bar AND acknowledged_at IS NOT NULL", "        WHERE false"),),
        ("tests/db/test_envelope.py::test_an_acknowledged_failure_rate_trip_leaves_its_failures_unjudged",)),
    Breakage(
        "scans sent down the photo path", "stage_e_dagster/domain/evidence/card_finder.py",
        (("    if is_card_shaped(width, height):\n        return FoundCard(image, image_corners(), SCAN)",
          "    if False:\n        return FoundCard(image, image_corners(), SCAN)"),),
        ("tests/unit/test_card_finder.py::test_an_ordinary_scan_is_already_a_card",)),
    Breakage(
        "a photo of several cards taken as one", "stage_e_dagster/domain/evidence/card_finder.py",
        (("    if rivals:\n", "    if False:\n"),),
        ("tests/unit/test_card_finder.py::test_a_photo_of_two_cards_skips_as_several",)),
    Breakage(
        "a card cut off by the frame not seen", "stage_e_dagster/domain/evidence/card_finder.py",
        (("    if cut:\n        best = max(cut", "    if False:\n        best = max(cut"),),
        ("tests/unit/test_card_finder.py::test_a_card_cut_off_by_the_frame_skips_as_cut_off",)),
    Breakage(
        "a photographed card never turned upright", "stage_e_dagster/domain/evidence/card_finder.py",
        (("    if not orientation.upright:\n", "    if False:\n"),),
        ("tests/unit/test_card_finder.py::test_a_photographed_card_is_found_straightened_and_upright",)),
)


def copy_tree(target: Path) -> None:
    """This tree's files as git knows them (tracked, and untracked but not ignored), copied to `target`."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


def install(copy: Path) -> Path:
    """A virtualenv for `copy`: the copy first on its path, this virtualenv's packages after it (without this tree's
    editable finder), and this virtualenv's console scripts pointed at its interpreter. Its python."""
    venv = copy / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    ours = sysconfig.get_paths()["purelib"]
    (site / "breakage_copy.pth").write_text(
        f"{copy}\n"
        f"import site, sys; site.addsitedir({ours!r}); sys.meta_path[:] = [f for f in sys.meta_path "
        "if not getattr(f, '__module__', '').startswith('__editable__')]\n")
    (venv / "share").symlink_to(Path(sys.prefix) / "share")  # data files wheels install there (Tesseract's model)
    here = Path(sys.executable).parent
    for script in here.iterdir():
        target = venv / "bin" / script.name
        if target.exists() or not script.is_file():
            continue
        try:
            head, _, body = script.read_text().partition("\n")
        except UnicodeDecodeError:
            continue
        if head.startswith("#!") and "python" in head:
            target.write_text(f"#!{python}\n{body}")
            target.chmod(0o755)
    check = subprocess.run([str(python), "-c", "import stage_e_dagster, testkit; print(stage_e_dagster.__file__)"],
                           capture_output=True, text=True, check=True, cwd="/").stdout.strip()
    if not check.startswith(str(copy)):
        raise SystemExit(f"the copy's install imports {check}, not the copy")
    return python


def apply(copy: Path, breakage: Breakage) -> str | None:
    """Apply the breakage's edits to the copy; why not, when one does not apply (its text is not there once)."""
    path = copy / breakage.path
    text = path.read_text()
    for old, new in breakage.edits:
        if text.count(old) != 1:
            return f"{breakage.path}: the text to break was found {text.count(old)} times, not once"
        text = text.replace(old, new)
    path.write_text(text)
    return None


def run_tests(python: Path, copy: Path, tests: tuple[str, ...], log: Path) -> int:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{python.parent}{os.pathsep}{env.get('PATH', '')}"
    with log.open("w") as out:
        return subprocess.run([str(python), "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests], cwd=copy,
                              env=env, stdout=out, stderr=subprocess.STDOUT).returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="run only the breakages whose name contains one of these")
    parser.add_argument("--list", action="store_true", help="print the breakages and their tests, run nothing")
    parser.add_argument("--keep", action="store_true", help="keep the scratch copy and the test logs")
    args = parser.parse_args()
    chosen = [b for b in BREAKAGES if not args.names or any(n in b.name for n in args.names)]
    if args.list:
        for breakage in chosen:
            print(f"{breakage.name}: {breakage.path} -> {', '.join(breakage.tests)}")
        return
    scratch = Path(tempfile.mkdtemp(prefix="se-br-", dir="/tmp"))
    copy = scratch / "tree"
    results: list[tuple[Breakage, str, float]] = []
    try:
        copy_tree(copy)
        python = install(copy)
        print(f"scratch copy {copy}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs", flush=True)
        control = scratch / "unbroken.log"
        every = tuple(dict.fromkeys(test for breakage in chosen for test in breakage.tests))
        if run_tests(python, copy, every, control) != 0:
            print(f"the tests fail on the unbroken copy (see {control}): nothing judged", flush=True)
            args.keep = True
            sys.exit(2)
        print("the tests pass on the unbroken copy", flush=True)
        for index, breakage in enumerate(chosen, 1):
            pristine = (copy / breakage.path).read_text()
            started = time.monotonic()
            why = apply(copy, breakage)
            if why is not None:
                verdict = f"error ({why})"
            else:
                log = scratch / f"breakage-{index}.log"
                code = run_tests(python, copy, breakage.tests, log)
                verdict = {0: "MISSED", 1: "caught"}.get(code, f"error (pytest exit code {code}, see {log})")
            (copy / breakage.path).write_text(pristine)
            results.append((breakage, verdict, time.monotonic() - started))
            print(f"{index:2d}. {breakage.name}: {verdict} ({results[-1][2]:.0f} s)", flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
    print("\n| breakage | caught by | verdict |\n| --- | --- | --- |")
    for breakage, verdict, _ in results:
        print(f"| {breakage.name} | {'<br>'.join(f'`{t}`' for t in breakage.tests)} | {verdict} |")
    caught = sum(verdict == "caught" for _, verdict, _ in results)
    print(f"\n{caught} of {len(results)} breakages caught; load average {os.getloadavg()[0]:.1f}")
    sys.exit(0 if caught == len(results) else 1)


if __name__ == "__main__":
    main()
