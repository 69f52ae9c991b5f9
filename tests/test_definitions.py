"""The Dagster definitions load, and name every job, sensor, schedule and resource the design calls for."""

from __future__ import annotations

from stage_e_dagster.definitions import defs


def test_definitions_load_with_every_part_wired():
    repo = defs.get_repository_def()
    assert {"database", "ocr_slots", "ocr", "envelope", "stream"} <= set(repo.get_top_level_resources())
    assert {"micro_batch", "acknowledge_envelope_trip"} <= {job.name for job in repo.get_all_jobs()}
    assert {"card_stream", "record_run_failures"} <= {s.name for s in repo.sensor_defs}
    assert [s.name for s in repo.schedule_defs] == ["backstop_sweep"]


def test_micro_batch_runs_the_three_stages_in_order():
    job = defs.resolve_job_def("micro_batch")
    steps = [node.name for node in job.graph.nodes_in_topological_order]
    assert steps == ["image_evidence", "printing_votes", "dispatch_outcome"]
    assert job.tags["stage_e/job"] == "micro_batch"
