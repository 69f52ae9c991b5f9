"""Catalogue import memory is bounded: a 10x larger file does not raise peak memory (a real bulk file is GBs)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from stage_e_dagster.demo.catalog import generate_catalog, write_catalog

pytestmark = pytest.mark.slow

_PEAK = """
import json, resource, sys
from pathlib import Path
from stage_e_dagster.db.catalog.importer import import_catalog
from stage_e_dagster.db.core.engine import get_engine
summary = import_catalog(get_engine(sys.argv[1]), Path(sys.argv[2]))
print(json.dumps({"printings": summary.printings,
                  "peak_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def _import_peak(db_url: str, path) -> dict:
    out = subprocess.run([sys.executable, "-c", _PEAK, db_url, str(path)], check=True, capture_output=True,
                         text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_peak_memory_does_not_grow_with_the_file(db_url, tmp_path):
    small, large = tmp_path / "small.json", tmp_path / "large.json"
    write_catalog(small, generate_catalog(2_000, seed=1))
    write_catalog(large, generate_catalog(20_000, seed=2))
    assert large.stat().st_size > 9 * small.stat().st_size
    first = _import_peak(db_url, small)
    second = _import_peak(db_url, large)
    assert (first["printings"], second["printings"]) == (2_000, 20_000)
    growth_mb = (second["peak_kb"] - first["peak_kb"]) / 1024
    file_mb = large.stat().st_size / 1e6
    print(f"peak RSS {first['peak_kb'] // 1024} MB for 2k printings, "
          f"{second['peak_kb'] // 1024} MB for 20k ({file_mb:.1f} MB file)")
    assert growth_mb < 15, f"peak grew {growth_mb:.1f} MB importing a {file_mb:.1f} MB file"
