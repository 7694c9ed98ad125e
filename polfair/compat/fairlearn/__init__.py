"""fairlearn-style fairness metrics as Polars expressions (``select``, ``group_by().agg()``, ``over()``, lazy).

Names and semantics follow fairlearn 0.15 (``sensitive_features``, ``sample_weight``, ``pos_label``);
undefined values are null where fairlearn returns 0.0 (documented per function).
"""

from polfair.compat.fairlearn.metrics import (
    EXPR_METRICS,
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
    metric,
    negative_predictive_value,
    positive_predictive_value,
    selection_rate,
    true_negative_rate,
    true_positive_rate,
)

__all__ = [
    "EXPR_METRICS",
    "accuracy",
    "base_rate",
    "demographic_parity_difference",
    "demographic_parity_ratio",
    "equal_opportunity_difference",
    "equal_opportunity_ratio",
    "equalized_odds_difference",
    "equalized_odds_ratio",
    "error_rate",
    "false_discovery_rate",
    "false_negative_rate",
    "false_omission_rate",
    "false_positive_rate",
    "group_difference",
    "group_max",
    "group_min",
    "group_ratio",
    "metric",
    "negative_predictive_value",
    "positive_predictive_value",
    "selection_rate",
    "true_negative_rate",
    "true_positive_rate",
]
