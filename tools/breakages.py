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

A row that no longer applies to the tree (its file, its text to break, or a test it names is gone) stops the tool
before anything runs, naming the row; `tests/unit/test_breakages.py` checks the same on every `make test`.

Usage: `python tools/breakages.py [NAME ...]` (`make breakages`); `--list` prints the table's rows; `--write`
rewrites the table in docs/testing.md (between its markers) from `BREAKAGES`, and the same unit test fails while
the doc differs from it.
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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script: `tools` is a package of this tree
    sys.path.insert(0, str(ROOT))

from tools.breakage_rows import BREAKAGES, Breakage  # noqa: E402


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


def applied(text: str, breakage: Breakage) -> str:
    """`text` with the breakage's edits made in order; `StaleBreakage` when one edit's text is not there exactly
    once (the code moved or changed: the row must follow it)."""
    for number, (old, new) in enumerate(breakage.edits, 1):
        found = text.count(old)
        if found != 1:
            raise StaleBreakage(f"breakage {breakage.name!r}: edit {number}'s text to break was found {found} times "
                                f"in {breakage.path}, not once")
        text = text.replace(old, new)
    return text


class StaleBreakage(ValueError):
    """A row of the table that no longer applies to the tree: its file, its text to break or a test it names is
    gone."""


def stale(breakage: Breakage, root: Path = ROOT) -> list[str]:
    """Why `breakage` no longer applies to the tree at `root` (nothing when it does): its file is missing, an
    edit's text is not there exactly once, or a test it names (a file, or a test function in it) is gone."""
    problems = []
    path = root / breakage.path
    if not path.is_file():
        problems.append(f"breakage {breakage.name!r}: {breakage.path} does not exist")
    else:
        try:
            applied(path.read_text(), breakage)
        except StaleBreakage as err:
            problems.append(str(err))
    for test in breakage.tests:
        file, _, node = test.partition("::")
        if not (root / file).is_file():
            problems.append(f"breakage {breakage.name!r}: its test file {file} does not exist")
        elif node and f"def {node.split('::')[-1].split('[')[0]}(" not in (root / file).read_text():
            problems.append(f"breakage {breakage.name!r}: its test {test} does not exist")
    return problems


def table(breakages: tuple[Breakage, ...] = BREAKAGES) -> str:
    """The breakage table of docs/testing.md, as markdown (a test keeps the doc equal to it)."""
    lines = ["| breakage | where | caught by |", "| --- | --- | --- |"]
    for b in breakages:
        where = f"`{b.path.removeprefix('stage_e_dagster/')}`" + (f" ({b.what})" if b.what else "")
        name = b.name.replace("|", "\\|")
        lines.append(f"| {name} | {where} | {', '.join(f'`{t}`' for t in b.tests)} |")
    return "\n".join(lines)


DOC = ROOT / "docs" / "testing.md"
BEGIN = "<!-- breakage table: generated by `python tools/breakages.py --write` from tools/breakages.py -->"
END = "<!-- end of the breakage table -->"


def with_table(doc: str, breakages: tuple[Breakage, ...] = BREAKAGES) -> str:
    """`doc` with the text between the table's markers replaced by the table made from `breakages`."""
    start, end = doc.index(BEGIN) + len(BEGIN), doc.index(END)
    return f"{doc[:start]}\n{table(breakages)}\n{doc[end:]}"


def apply(copy: Path, breakage: Breakage) -> str | None:
    """Apply the breakage's edits to the copy; why not, when one does not apply (its text is not there once)."""
    path = copy / breakage.path
    try:
        path.write_text(applied(path.read_text(), breakage))
    except StaleBreakage as err:
        return str(err)
    return None


def run_tests(python: Path, copy: Path, tests: tuple[str, ...], log: Path) -> int:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{python.parent}{os.pathsep}{env.get('PATH', '')}"
    with log.open("w") as out:
        return subprocess.run([str(python), "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests], cwd=copy,
                              env=env, stdout=out, stderr=subprocess.STDOUT).returncode


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="run only the breakages whose name contains one of these")
    parser.add_argument("--list", action="store_true", help="print the breakages and their tests, run nothing")
    parser.add_argument("--keep", action="store_true", help="keep the scratch copy and the test logs")
    parser.add_argument("--write", action="store_true", help="rewrite docs/testing.md's table from the rows, run "
                                                             "nothing")
    args = parser.parse_args(argv)
    if args.write:
        DOC.write_text(with_table(DOC.read_text(encoding="utf-8")), encoding="utf-8")
        return
    chosen = tuple(b for b in BREAKAGES if not args.names or any(n in b.name for n in args.names))
    if args.list:
        for breakage in chosen:
            print(f"{breakage.name}: {breakage.path} -> {', '.join(breakage.tests)}")
        return
    problems = [problem for breakage in chosen for problem in stale(breakage)]
    if problems:  # before any copy or test run: a row that no longer applies is a broken table, never a verdict
        print("\n".join(["STALE rows of the breakage table (make each follow the code it breaks):", *problems]),
              file=sys.stderr, flush=True)
        sys.exit(2)
    if not chosen:
        print(f"no breakage's name contains any of {args.names}", file=sys.stderr)
        sys.exit(2)
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
