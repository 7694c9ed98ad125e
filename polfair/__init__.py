"""polfair: fairness metrics for classifiers as one lazy Polars group-by.

One pass over the data yields the cell table (weighted confusion counts per cell of every
protected-attribute combination, :func:`confusion_counts`); every metric, roll-up, comparison,
entropy index and differential-fairness value is arithmetic on that small table
(:func:`fairness_report`). The same metric definitions serve aif360-compatible classes
(:class:`ClassificationMetric`, :class:`BinaryLabelDatasetMetric`), Polars expressions
(:func:`selection_rate`, :func:`equalized_odds_difference`, ...), the streaming
:class:`FairnessAccumulator`, and the monitoring layer (:class:`FairnessConfig`, :func:`alerts`).

Every public name is loaded when first used (PEP 562 ``__getattr__``): ``import polfair`` costs
about ``import polars`` (scipy, narwhals, jinja2 and the peer facades load with the function that
needs them), and ``df.fair`` is registered at import with methods that load on first call.
"""

from __future__ import annotations

import functools
import importlib
from typing import TYPE_CHECKING, Any

import polfair.namespace  # noqa: F401  (registers the ``df.fair`` / ``lf.fair`` namespaces; light)
from polfair import exceptions  # noqa: F401  (``polfair.exceptions`` with the package, as before; light)

if TYPE_CHECKING:  # every public name and its module: what type checkers and IDEs see, and what __getattr__ loads
    from polfair.api import LazyReport, confusion_counts, fairness_report, fairness_report_batches, lazy_report
    from polfair.compat.aif360 import BinaryLabelDatasetMetric, ClassificationMetric
    from polfair.compat.fairlearn import (
        MetricFrame,
        accuracy,
        base_rate,
        demographic_parity_difference,
        demographic_parity_ratio,
        equal_opportunity_difference,
        equal_opportunity_ratio,
        equalized_odds_difference,
        equalized_odds_ratio,
        error_rate,
        false_discovery_rate,
        false_negative_rate,
        false_omission_rate,
        false_positive_rate,
        group_difference,
        group_max,
        group_min,
        group_ratio,
        make_derived_metric,
        negative_predictive_value,
        positive_predictive_value,
        selection_rate,
        true_negative_rate,
        true_positive_rate,
    )
    from polfair.compat.ignite import multiclass_report, subgroup_accuracy_difference
    from polfair.compat.yardstick import (
        GroupwiseMetric,
        demographic_parity,
        diff_range,
        equal_opportunity,
        equalized_odds,
        groupwise_metric,
        max_abs_difference_to_reference,
        ratio_range,
    )
    from polfair.core.metrics import ALIASES, DISPARITIES, METRICS
    from polfair.core.passes.counts import COUNT_COLUMNS, merge_counts
    from polfair.core.report.build import REPORT_COLUMNS, report_from_counts
    from polfair.core.report.run_metadata import with_run_metadata
    from polfair.core.report.wide import to_wide
    from polfair.core.schema import SCHEMA_VERSION
    from polfair.datasets import load_adult, load_adult_regression, load_compas, load_german_credit, make_bisg_lending
    from polfair.engines.accumulator import FairnessAccumulator
    from polfair.engines.sql import cells_from_sql, counting_sql
    from polfair.exceptions import (
        ColumnNotFoundError,
        InvalidInputError,
        MissingValuesWarning,
        PolarityError,
        PolarityWarning,
        PolfairError,
        ReferenceWarning,
        ReportSizeWarning,
        SchemaMismatchError,
        UnknownOptionError,
        WeightRangeWarning,
    )
    from polfair.mitigation import group_thresholds, reweighing
    from polfair.monitor import FairnessConfig, alerts, apply_thresholds, compare_reports
    from polfair.monitor.disclosure import suppress_small_groups
    from polfair.outputs.html import HtmlReport, to_html, write_html
    from polfair.outputs.summaries import summarize
    from polfair.outputs.writers import append_report, write_report
    from polfair.proxies import proxy_report, proxy_scan
    from polfair.ranking import RankingAccumulator, ranking_counts, ranking_report
    from polfair.regression import RegressionAccumulator, regression_counts, regression_report
    from polfair.regulatory import adverse_impact
    from polfair.scores import (
        merge_score_counts,
        precision_recall_curve,
        reliability_curve,
        roc_curve,
        score_counts,
        score_report,
        threshold_sweep,
    )
    from polfair.slices import slice_scan

__version__ = "0.1.0"

__all__ = [
    "confusion_counts",
    "merge_counts",
    "fairness_report",
    "fairness_report_batches",
    "lazy_report",
    "LazyReport",
    "report_from_counts",
    "counting_sql",
    "cells_from_sql",
    "regression_report",
    "regression_counts",
    "ranking_report",
    "ranking_counts",
    "RankingAccumulator",
    "RegressionAccumulator",
    "COUNT_COLUMNS",
    "REPORT_COLUMNS",
    "METRICS",
    "ALIASES",
    "DISPARITIES",
    "selection_rate",
    "base_rate",
    "true_positive_rate",
    "true_negative_rate",
    "false_positive_rate",
    "false_negative_rate",
    "positive_predictive_value",
    "negative_predictive_value",
    "false_discovery_rate",
    "false_omission_rate",
    "accuracy",
    "error_rate",
    "demographic_parity_difference",
    "demographic_parity_ratio",
    "equalized_odds_difference",
    "equalized_odds_ratio",
    "equal_opportunity_difference",
    "equal_opportunity_ratio",
    "group_difference",
    "group_ratio",
    "group_min",
    "group_max",
    "MetricFrame",
    "make_derived_metric",
    "GroupwiseMetric",
    "groupwise_metric",
    "diff_range",
    "ratio_range",
    "max_abs_difference_to_reference",
    "demographic_parity",
    "equal_opportunity",
    "equalized_odds",
    "FairnessConfig",
    "alerts",
    "apply_thresholds",
    "compare_reports",
    "suppress_small_groups",
    "to_wide",
    "with_run_metadata",
    "append_report",
    "write_report",
    "SCHEMA_VERSION",
    "score_counts",
    "merge_score_counts",
    "score_report",
    "threshold_sweep",
    "roc_curve",
    "precision_recall_curve",
    "reliability_curve",
    "adverse_impact",
    "group_thresholds",
    "reweighing",
    "proxy_scan",
    "proxy_report",
    "slice_scan",
    "summarize",
    "to_html",
    "write_html",
    "HtmlReport",
    "ClassificationMetric",
    "BinaryLabelDatasetMetric",
    "FairnessAccumulator",
    "multiclass_report",
    "subgroup_accuracy_difference",
    "load_compas",
    "load_adult",
    "load_adult_regression",
    "load_german_credit",
    "make_bisg_lending",
    "PolfairError",
    "ColumnNotFoundError",
    "InvalidInputError",
    "SchemaMismatchError",
    "UnknownOptionError",
    "MissingValuesWarning",
    "PolarityError",
    "PolarityWarning",
    "ReferenceWarning",
    "WeightRangeWarning",
    "ReportSizeWarning",
    "__version__",
]


@functools.cache
def _where() -> dict[str, str]:
    """Public name -> the module it lives in, read (once, on first use) from the ``if TYPE_CHECKING:`` imports."""
    import ast

    # the source through the module's loader (a file's, a zip's, ...), not a path that may be no file
    tree = ast.parse(getattr(__spec__.loader, "get_source", lambda _: "")(__name__) or "")
    block = next(n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING")
    return {a.name: n.module for n in block.body if isinstance(n, ast.ImportFrom) and n.module for a in n.names}


def __getattr__(name: str) -> Any:
    """Load a public name on first use (PEP 562) and keep it in the module's namespace."""
    module = _where().get(name)
    if module is None:
        raise AttributeError(f"module 'polfair' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
