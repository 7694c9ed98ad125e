"""polfair: fairness metrics for classifiers as one lazy Polars group-by.

One pass over the data yields the cell table (weighted confusion counts per cell of every
protected-attribute combination, :func:`confusion_counts`); every metric, roll-up, comparison,
entropy index and differential-fairness value is arithmetic on that small table
(:func:`fairness_report`).
"""

from __future__ import annotations

from polfair.counts import COUNT_COLUMNS, confusion_counts, merge_counts
from polfair.datasets import load_adult, load_compas, load_german_credit
from polfair.exceptions import ColumnNotFoundError, InvalidInputError, MissingValuesWarning, PolfairError
from polfair.metrics import ALIASES, DISPARITIES, METRICS
from polfair.report import REPORT_COLUMNS, fairness_report, report_from_counts

__version__ = "0.1.0"

__all__ = [
    "ALIASES",
    "COUNT_COLUMNS",
    "DISPARITIES",
    "METRICS",
    "REPORT_COLUMNS",
    "ColumnNotFoundError",
    "InvalidInputError",
    "MissingValuesWarning",
    "PolfairError",
    "__version__",
    "confusion_counts",
    "fairness_report",
    "load_adult",
    "load_compas",
    "load_german_credit",
    "merge_counts",
    "report_from_counts",
]
