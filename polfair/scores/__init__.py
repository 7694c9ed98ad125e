"""Score analysis from one pass (issue 14).

Score histograms, ROC / precision-recall / reliability curves, AUC, AP, Brier, ECE, ABROCA and
threshold sweeps by group.

The room imports only :mod:`polfair.core`. :func:`score_counts` is the ONE ``group_by``;
everything else is arithmetic on its small table, which merges across partitions
(:func:`merge_score_counts`).
"""

from polfair.scores.counts import SCORE_COUNT_COLUMNS, merge_score_counts, score_counts
from polfair.scores.curves import (
    SCORE_METRICS,
    group_histograms,
    precision_recall_curve,
    reliability_curve,
    roc_curve,
    score_report,
    score_report_from_counts,
)
from polfair.scores.sweep import (
    sweep_counts,
    threshold_sweep,
    threshold_sweep_from_counts,
)

__all__ = [
    "SCORE_COUNT_COLUMNS",
    "SCORE_METRICS",
    "group_histograms",
    "merge_score_counts",
    "precision_recall_curve",
    "reliability_curve",
    "roc_curve",
    "score_counts",
    "score_report",
    "score_report_from_counts",
    "sweep_counts",
    "threshold_sweep",
    "threshold_sweep_from_counts",
]
