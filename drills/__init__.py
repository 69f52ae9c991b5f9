"""Drills: the pipeline run where it can break (a live daemon, crashes, races, outages, hostile files, the load
governor, a soak).

One contract: `python -m drills NAME [size options]` (`drills/__main__.py`). Each drill module has the same shape:
`run(figures=None, *, <sizes>) -> figures`, which sets up its own throwaway home (`testkit.live`), fills and returns
its figures and raises AssertionError on a broken rule, and `main(argv)`, which parses the size options and ends
with the drill's one verdict line (`verdict.py`). The test suite calls `run` at a small size (tests/drills/);
`scripts/drills/<name>` runs `main` at a bigger one.
"""
