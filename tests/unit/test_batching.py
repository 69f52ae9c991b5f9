"""Pure batch planning: batch splitting, queue room, deterministic run keys, short tags."""

from __future__ import annotations

import pytest

from stage_e_dagster.domain.batching import (
    runs_allowed,
    split_batches,
    stream_run_key,
    sweep_run_key,
)
from stage_e_dagster.jobs import batch_tags


def test_split_batches_keeps_order_and_leaves_a_short_tail():
    batches = split_batches(list(range(250)), 100)
    assert [len(b) for b in batches] == [100, 100, 50]
    assert [i for b in batches for i in b] == list(range(250))
    assert split_batches([], 10) == []
    with pytest.raises(ValueError):
        split_batches([1], 0)


@pytest.mark.parametrize(
    ("queued", "max_queued", "per_tick", "expected"),
    [(0, 8, 4, 4), (6, 8, 4, 2), (8, 8, 4, 0), (11, 8, 4, 0), (0, 2, 4, 2)],
)
def test_runs_allowed_never_exceeds_the_room_in_the_queue(queued, max_queued, per_tick, expected):
    assert runs_allowed(queued, max_queued, per_tick) == expected


def test_stream_run_key_is_deterministic_and_version_sensitive():
    members = [(1, "aa@t1"), (2, "bb@t1"), (3, "cc@t1")]
    key = stream_run_key(members)
    assert key == stream_run_key(list(members))
    assert key.startswith("card-event-1-3-3-")
    assert stream_run_key([(1, "aa@t1"), (2, "bX@t2"), (3, "cc@t1")]) != key
    assert stream_run_key(members[:2]) != key
    assert len(key) < 80
    with pytest.raises(ValueError):
        stream_run_key([])


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
