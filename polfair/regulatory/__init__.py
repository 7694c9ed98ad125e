"""Regulatory adverse-impact batteries from one pass (issue 14).

US EEOC Uniform Guidelines (29 CFR § 1607.4(D)) and NYC Local Law 144 bias audits (6 RCNY § 5-301).

Imports :mod:`polfair.core` and, by a documented edge, :mod:`polfair.scores` (the score histogram
that gives NYC's scoring rate above the median in the same pass).
"""

from polfair.regulatory.adverse_impact import (
    ADVERSE_IMPACT_COLUMNS,
    PRESETS,
    adverse_impact,
    adverse_impact_from_counts,
)
from polfair.regulatory.statistics import (
    fisher_exact_two_sided,
    flip_to_nonsignificance,
    two_proportion_z,
)

__all__ = [
    "ADVERSE_IMPACT_COLUMNS",
    "PRESETS",
    "adverse_impact",
    "adverse_impact_from_counts",
    "fisher_exact_two_sided",
    "flip_to_nonsignificance",
    "two_proportion_z",
]
