"""Stage D calculators: pure decisions over stored evidence and the printing catalogue.

`run_calculators` runs the funnel for one card: join-key, fallback (without a confident join-key hit), then the
slow-path router that sends everything else to human review.
"""

from stage_e_dagster.domain.calculators.fallback import FALLBACK_ID, decide_fallback, is_confident_hit
from stage_e_dagster.domain.calculators.join_key import JOIN_KEY_ID, decide_join_key
from stage_e_dagster.domain.calculators.matching import hamming_distance, normalise_collector_number
from stage_e_dagster.domain.calculators.slow_path import (
    SLOW_PATH_ID,
    TO_REVIEW,
    CalculatorOutcome,
    evidence_version_key,
    outcome_label,
    route,
    run_calculators,
)

__all__ = [
    "FALLBACK_ID",
    "JOIN_KEY_ID",
    "SLOW_PATH_ID",
    "TO_REVIEW",
    "CalculatorOutcome",
    "decide_fallback",
    "decide_join_key",
    "evidence_version_key",
    "hamming_distance",
    "is_confident_hit",
    "normalise_collector_number",
    "outcome_label",
    "route",
    "run_calculators",
]
