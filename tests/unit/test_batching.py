"""Pure batch planning: batch splitting, deterministic sweep run keys, short tags."""

from __future__ import annotations

import pytest

from stage_e_dagster.domain.batching import split_batches, sweep_run_key
from stage_e_dagster.job_contracts import batch_tags


def test_split_batches_keeps_order_and_leaves_a_short_tail():
    batches = split_batches(list(range(250)), 100)
    assert [len(b) for b in batches] == [100, 100, 50]
    assert [i for b in batches for i in b] == list(range(250))
    assert split_batches([], 10) == []
    with pytest.raises(ValueError):
        split_batches([1], 0)


def test_sweep_run_keys_are_distinct_per_cursor_pass_range_and_batch():
    keys = {
        sweep_run_key("stage_c", 0, 0, 100, 0),
        sweep_run_key("stage_c", 0, 0, 100, 1),
        sweep_run_key("stage_c", 1, 0, 100, 0),
        sweep_run_key("stage_c", 0, 100, 200, 0),
        sweep_run_key("stage_d", 0, 0, 100, 0),
    }
    assert len(keys) == 5


def test_batch_tags_are_short_labels_never_the_id_list():
    ids = list(range(1000, 1100))
    tags = batch_tags("card-event", "passive", ids)
    assert tags == {
        "stage_e/trigger": "card-event",
        "stage_e/mode": "passive",
        "stage_e/batch_size": "100",
        "stage_e/first_card": "1000",
        "stage_e/last_card": "1099",
    }
    assert all(len(v) <= 32 for v in tags.values())
