"""Drills: the pipeline run where it can break (a live daemon, crashes, races, outages, hostile files, a soak).

Each drill is a module here with a `run(...)` function the test suite calls at a small size and a `main()` that
`scripts/drills/<name>` calls at a bigger one. `live.py` is the harness they share with the live tests;
`verdict.py` prints the one line a drill script ends with.
"""
