"""The Dagster definitions load, and name every job, sensor, schedule and resource the design calls for."""

from __future__ import annotations

from stage_e_dagster.definitions import defs


def test_definitions_load_with_every_part_wired():
    repo = defs.get_repository_def()
    assert {"database", "ocr_slots", "ocr", "envelope", "stream"} <= set(repo.get_top_level_resources())
    assert {"micro_batch", "acknowledge_envelope_trip", "sync_sources", "invariant_checks"} <= {
        job.name for job in repo.get_all_jobs()}
    assert {"card_stream", "record_run_failures", "source_inbox"} <= {s.name for s in repo.sensor_defs}
    assert sorted(s.name for s in repo.schedule_defs) == ["backstop_sweep", "invariant_checks", "source_resync"]


def test_micro_batch_runs_the_three_stages_in_order():
    job = defs.resolve_job_def("micro_batch")
    steps = [node.name for node in job.graph.nodes_in_topological_order]
    assert steps == ["image_evidence", "printing_votes", "dispatch_outcome"]  # no asset check steps
    assert job.tags["stage_e/job"] == "micro_batch"


def test_the_asset_checks_run_in_their_own_job_not_in_every_batch():
    checks = defs.resolve_job_def("invariant_checks")
    assert {node.name for node in checks.graph.nodes} == {
        "printing_votes_no_duplicate_votes", "printing_votes_no_machine_only_resolution",
        "dispatch_outcome_completed_batches_have_every_stage", "dispatch_outcome_no_stale_open_trip",
        "dispatch_outcome_no_silent_running_batch"}
    assert [node.name for node in defs.resolve_job_def("sync_sources").graph.nodes] == ["card_sources"]
