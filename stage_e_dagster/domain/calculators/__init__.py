"""Stage D calculators: pure decisions over stored evidence and the printing catalogue.

`registry.CALCULATORS` declares them in order; `run_calculators` runs that funnel for one card (join-key, then era
and fallback while there is no confident hit) and the slow-path router sends everything without a hit to human review.
"""

from stage_e_dagster.domain.calculators.era import ERA_ID, decide_era
from stage_e_dagster.domain.calculators.fallback import FALLBACK_ID, decide_fallback
from stage_e_dagster.domain.calculators.join_key import JOIN_KEY_ID, decide_join_key
from stage_e_dagster.domain.calculators.matching import hamming_distance, normalise_collector_number
from stage_e_dagster.domain.calculators.registry import (
    CALCULATORS,
    MACHINE_PREFIX,
    Calculator,
    is_confident_hit,
    machine_voters,
)
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
    "CALCULATORS",
    "ERA_ID",
    "FALLBACK_ID",
    "JOIN_KEY_ID",
    "MACHINE_PREFIX",
    "SLOW_PATH_ID",
    "TO_REVIEW",
    "Calculator",
    "CalculatorOutcome",
    "decide_era",
    "decide_fallback",
    "decide_join_key",
    "evidence_version_key",
    "hamming_distance",
    "is_confident_hit",
    "machine_voters",
    "normalise_collector_number",
    "outcome_label",
    "route",
    "run_calculators",
]
