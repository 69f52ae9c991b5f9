"""The work rule's eligibility floor in SQL (`rule.sql`'s `eligibility_reason`) on both sides of its edge, and the
same answer as the Python rule (`domain.kinds.under_dpi`) there: the minimum DPI on each axis, an unknown size, and
a foreign language with and without matching to English."""

from __future__ import annotations

import math

import pytest

from stage_e_dagster.domain.kinds import DEFAULT_MIN_DPI, under_dpi
from testkit.sql import scalar


@pytest.mark.parametrize("min_dpi", [DEFAULT_MIN_DPI, 2 * DEFAULT_MIN_DPI])
def test_the_dpi_floor_in_sql_matches_python_on_both_sides_of_its_edge(db_url, min_dpi):
    edge = (math.ceil(min_dpi * 630 / 254), math.ceil(min_dpi * 880 / 254))  # the smallest size at the floor
    sizes = [edge, (edge[0] - 1, edge[1]), (edge[0], edge[1] - 1), edge[::-1], (0, edge[1]), (1, 1)]
    reasons = {size: scalar(db_url, "SELECT eligibility_reason('card', '{}', 'en', %s, %s, %s, false)",
                            (*size, min_dpi)) for size in sizes}
    assert reasons == {size: "low-dpi" if under_dpi(*size, min_dpi) else None for size in sizes}
    assert [reasons[size] for size in sizes] == [None, "low-dpi", "low-dpi", None, None, "low-dpi"]


def test_a_foreign_scan_is_ineligible_unless_matched_to_english(db_url):
    ask = "SELECT eligibility_reason('card', '{}', %s, 600, 900, 200, %s)"
    assert scalar(db_url, ask, ("fr", False)) == "non-english"
    assert scalar(db_url, ask, ("fr", True)) is None
    assert scalar(db_url, ask, ("en", False)) is None
