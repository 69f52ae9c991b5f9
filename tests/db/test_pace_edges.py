"""The fetch pace's SQL (`db/intake/pace.py`) at each of its edges, on both sides: the floor a throttled response
halves down to (in the factor and in the turn it pushes back), the run of clean responses that doubles the pace
back (one short of it, and at it), and the configured rate the pace never recovers above (a pace at the rate keeps
counting and does not move; one just under it is capped at it)."""

from __future__ import annotations

from sqlalchemy import text

from stage_e_dagster.db.intake import pace

FLOOR = 0.125
INTERVAL = 10.0
"""Seconds between turns at full pace: a turn pushed back at the floor (80 s) is far from one pushed back at half
of it (160 s), whatever the clock does in between."""


def _set(conn, factor: float, streak: int = 0, generation: int = 0) -> None:
    conn.execute(text("UPDATE fetch_pace SET factor = :f, clean_streak = :s, generation = :g, "
                      "tat = clock_timestamp() - interval '1 hour' WHERE id = 1"),
                 {"f": factor, "s": streak, "g": generation})


def _turn_in(conn) -> float:
    """Seconds from now to the row's next turn."""
    return float(conn.execute(text("SELECT EXTRACT(EPOCH FROM (tat - clock_timestamp())) FROM fetch_pace "
                                   "WHERE id = 1")).scalar_one())


def test_a_throttled_response_halves_the_pace_down_to_its_floor_and_never_below(db_engine) -> None:
    with db_engine.begin() as conn:
        for factor, halved in ((0.5, 0.25), (2 * FLOOR + 0.0625, FLOOR + 0.03125), (2 * FLOOR, FLOOR),
                               (FLOOR + 0.0625, FLOOR), (FLOOR, FLOOR)):
            _set(conn, factor, generation=7)
            assert pace.throttled(conn, 7, INTERVAL, FLOOR) == halved, f"factor {factor}"
            assert abs(_turn_in(conn) - INTERVAL / halved) < 5, "the next turn is one interval at the new pace on"
            state = pace.read_pace(conn)
            assert (state.factor, state.generation, state.clean_streak) == (halved, 8, 0)
        _set(conn, 0.5, generation=7)
        assert pace.throttled(conn, 6, INTERVAL, FLOOR) is None, "a response of an older generation halves nothing"
        assert pace.read_pace(conn).factor == 0.5


def test_clean_responses_double_the_pace_at_the_end_of_their_run_not_one_before(db_engine) -> None:
    recover_after = 3
    with db_engine.begin() as conn:
        _set(conn, 0.25, streak=recover_after - 2, generation=4)
        assert pace.clean(conn, recover_after) == 0.25, "one short of the run"
        state = pace.read_pace(conn)
        assert (state.clean_streak, state.generation) == (recover_after - 1, 4)
        assert pace.clean(conn, recover_after) == 0.5, "the run's last clean response"
        state = pace.read_pace(conn)
        assert (state.clean_streak, state.generation) == (0, 5)


def test_the_pace_never_recovers_above_the_configured_rate(db_engine) -> None:
    with db_engine.begin() as conn:
        _set(conn, 0.75, streak=2, generation=1)
        assert pace.clean(conn, 3) == 1.0, "just under the rate: doubled, capped at the rate"
        _set(conn, 1.0, streak=2, generation=1)
        assert pace.clean(conn, 3) == 1.0, "at the rate: nothing to recover"
        state = pace.read_pace(conn)
        assert (state.clean_streak, state.generation) == (3, 1), "the run keeps counting; no new generation"
