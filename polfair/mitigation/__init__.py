"""Mitigation that stays in the data platform (issue 14).

Per-group decision thresholds under a fairness constraint (Hardt et al. 2016, as fairlearn's
ThresholdOptimizer) and Kamiran–Calders reweighing, both fitted from one pass and applied to new
rows as Polars expressions.

Imports :mod:`polfair.core` and, by a documented edge, :mod:`polfair.scores` (score histograms).
"""

from polfair.mitigation.reweighing import Reweighing, reweighing, reweighing_from_counts
from polfair.mitigation.thresholds import (
    CONSTRAINTS,
    GroupThresholds,
    group_thresholds,
    group_thresholds_from_counts,
)

__all__ = [
    "CONSTRAINTS",
    "GroupThresholds",
    "Reweighing",
    "group_thresholds",
    "group_thresholds_from_counts",
    "reweighing",
    "reweighing_from_counts",
]
