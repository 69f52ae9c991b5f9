"""The guarded scan read: symlinks, special files, escapes and oversized files become named skips, never reads.

Also the two ingest faults the hostile-files drill found: a file name that is not UTF-8 and a FIFO or symlink met
at ingest are refused with a reason, and the rest of the directory is registered.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PIL import Image

from stage_e_dagster.domain.evidence.model import EvidenceSkip
from stage_e_dagster.domain.scan_files import list_images, read_scan
from stage_e_dagster.domain.work import FILE_SKIPS
from stage_e_dagster.workers.ocr_worker import Task, process_task


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    root, outside = tmp_path / "src", tmp_path / "outside"
    (root / "sub").mkdir(parents=True)
    outside.mkdir()
    (root / "ok.png").write_bytes(b"inside")
    (root / "sub" / "deep.png").write_bytes(b"deep")
    (outside / "secret.png").write_bytes(b"secret")
    return root, outside


def _reason(result: bytes | EvidenceSkip) -> str:
    assert isinstance(result, EvidenceSkip), f"read {result[:20]!r} instead of refusing"
    return result.reason


def test_a_regular_file_inside_the_source_is_read(tree):
    root, _ = tree
    assert read_scan(root, "ok.png") == b"inside"
    assert read_scan(root, root / "sub" / "deep.png") == b"deep"
    assert read_scan(str(root), "sub/../ok.png") == b"inside"


def test_symlinks_are_refused_in_the_file_and_in_any_directory_above_it(tree):
    root, outside = tree
    (root / "to-secret.png").symlink_to(outside / "secret.png")
    (root / "to-zero.png").symlink_to("/dev/zero")
    (root / "inside-link.png").symlink_to(root / "ok.png")  # even one that stays inside: the rule is simple
    (root / "linked").symlink_to(outside, target_is_directory=True)
    for name in ("to-secret.png", "to-zero.png", "inside-link.png", "linked/secret.png"):
        assert _reason(read_scan(root, name)) == "file-symlink", name


def test_paths_that_leave_the_source_are_refused(tree):
    root, outside = tree
    assert _reason(read_scan(root, "../outside/secret.png")) == "outside-source"
    assert _reason(read_scan(root, outside / "secret.png")) == "outside-source"
    assert _reason(read_scan(root, "sub/../../outside/secret.png")) == "outside-source"
    assert _reason(read_scan(root, ".")) == "outside-source"


def test_special_files_are_refused_without_blocking(tree):
    root, _ = tree
    os.mkfifo(root / "fifo.png")  # opening it for reading without O_NONBLOCK would wait for a writer forever
    (root / "dir.png").mkdir()
    assert _reason(read_scan(root, "fifo.png")) == "not-a-regular-file"
    assert _reason(read_scan(root, "dir.png")) == "not-a-regular-file"
    assert _reason(read_scan(root, "gone.png")) == "file-missing"
    assert _reason(read_scan(root, "ok.png/x.png")) == "file-missing"


def test_a_huge_sparse_file_is_refused_before_a_byte_is_read(tree):
    root, _ = tree
    with open(root / "grown.png", "wb") as handle:
        handle.truncate(8 * 1024**3)  # 8 GB of holes: reading it whole would exhaust memory
    assert _reason(read_scan(root, "grown.png")) == "file-too-large"
    assert _reason(read_scan(root, "ok.png", max_bytes=3)) == "file-too-large"
    assert read_scan(root, "ok.png", max_bytes=6) == b"inside"


def test_every_refusal_about_the_file_is_a_file_skip():
    for reason in ("file-symlink", "not-a-regular-file", "outside-source", "file-too-large", "file-missing"):
        assert reason in FILE_SKIPS


def test_the_ocr_worker_refuses_a_scan_replaced_by_a_symlink(tree):
    """Stage C's worker reads through the guard: the target is never opened, whatever hash it was expected to have."""
    root, outside = tree
    (root / "ok.png").unlink()
    (root / "ok.png").symlink_to(outside / "secret.png")
    task = Task(1, str(root / "ok.png"), "0" * 64, frozenset({"geometry"}), root=str(root))
    result = process_task(task, engine=None, catalog=None)
    assert isinstance(result.outcome, EvidenceSkip)
    assert result.outcome.reason == "file-symlink"


def test_ingest_refuses_a_name_that_is_not_utf8_and_registers_the_rest(db_engine, tmp_path):
    from stage_e_dagster.db.intake.ingest import ingest_directory

    root = tmp_path / "scans"
    root.mkdir()
    Image.new("RGB", (63, 88), "red").save(root / "Opt.png")
    Image.new("RGB", (63, 88), "blue").save(os.fsdecode(bytes(root) + b"/Bad \xff\xfe.png"))
    Image.new("RGB", (63, 88), "green").save(root / "Line\nBreak.png")
    assert list_images(root).files == 3  # the inbox listing digests a name that is not UTF-8 too
    summary = ingest_directory(db_engine, root, "local")
    assert summary.new == 2
    assert summary.refused == [("Bad \\xff\\xfe.png", "name is not valid UTF-8")]
