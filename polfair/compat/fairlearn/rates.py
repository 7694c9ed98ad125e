"""Confusion-count rates: fairlearn's rate functions, and :func:`metric` for any count metric.

Each function returns a Polars aggregation expression when ``y_true``/``y_pred`` are column names or
expressions, and a number (``numpy.float64``, as fairlearn returns) when they are data: lists,
NumPy arrays, pandas or Polars Series. The twelve rate functions are made by :func:`_rate_function`
from what differs between them (the definition, the peer's name, the example; the edge case is
read from the denominator); their formulas are those of :data:`polfair.core.metrics.METRICS`.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from polfair.compat.fairlearn._inputs import Dual, accepts_data
from polfair.compat.fairlearn._rows import Rows, metric_value, resolve_metric
from polfair.core._typing import IntoExpr
from polfair.core.metrics import METRICS, Counts

__all__ = [
    "accuracy",
    "base_rate",
    "error_rate",
    "false_discovery_rate",
    "false_negative_rate",
    "false_omission_rate",
    "false_positive_rate",
    "metric",
    "negative_predictive_value",
    "positive_predictive_value",
    "selection_rate",
    "true_negative_rate",
    "true_positive_rate",
]

_PARAMETERS = """
    Parameters
    ----------
    y_true, y_pred
        Column names or expressions of the true and predicted labels (any dtype comparable with
        ``pos_label``; a boolean expression such as ``pl.col("score") >= 0.5`` works with
        ``pos_label=1``); or data, one value per row: lists, NumPy arrays, pandas or Polars Series.
        Rows with a null (or NaN) label, prediction or weight are left out.
    pos_label
        The positive label; every other value is negative. Default ``1``.
    sample_weight
        Optional per-row weights (cast to Float64): a column name or expression, or data like
        ``y_true``."""

_RAISES = """
    Raises
    ------
    PolfairError
        ``pos_label`` is ``None``; data of different lengths, or not one scalar per row.
    TypeError
        A column argument is neither a name, an expression nor data, or names and data are mixed."""


@accepts_data
def metric(
    name: str,
    y_true: IntoExpr,
    y_pred: IntoExpr,
    *,
    pos_label: Any = 1,
    sample_weight: IntoExpr | None = None,
) -> pl.Expr:
    """Any confusion-count metric of :data:`polfair.core.metrics.METRICS` as an aggregation expression.

    Parameters
    ----------
    name
        A name in :data:`EXPR_METRICS` (e.g. ``"true_positive_rate"``, ``"num_true_positives"``) or an
        alias of :data:`polfair.core.metrics.ALIASES` (``"recall"``, ``"precision"``, ...).
    y_true, y_pred
        Column names or expressions of the true and predicted labels (any dtype comparable with
        ``pos_label``); or data (lists, arrays, Series), as in :func:`selection_rate`.
    pos_label
        The positive (favorable) label; every other value is negative. Default ``1``.
    sample_weight
        Optional per-row weights: a column name or expression, or data.

    Returns
    -------
    pl.Expr or float
        Float64 aggregation named ``name`` (the canonical metric name): rates are fractions in
        [0, 1], counts are weighted sums; null where the denominator is 0. Given data, its value
        (``numpy.float64``; NaN where undefined).

    Raises
    ------
    PolfairError
        ``name`` is unknown, or ``pos_label`` is ``None``.
    TypeError
        A column argument is neither a name, an expression nor data.

    Notes
    -----
    Formula: ``METRICS[name].numerator / METRICS[name].denominator`` over the counts
    ``tp, fp, tn, fn`` (weighted); see :mod:`polfair.core.metrics`.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"y": [1, 1, 0, 0], "p": [1, 0, 1, 0]})
    >>> df.select(metric("recall", "y", "p"), metric("num_false_positives", "y", "p")).row(0)
    (0.5, 1.0)
    >>> metric("precision", [1, 1, 0, 0], [1, 0, 1, 0])
    np.float64(0.5)
    """
    canonical = resolve_metric(name)
    return metric_value(canonical, Rows(y_true, y_pred, pos_label, sample_weight)).alias(canonical)


def _rate_function(name: str, title: str, peer: str, edge: str, by_group: str, overall: str) -> Dual:
    """The public function of one rate: ``METRICS[name]`` over ``Rows``, with its numpydoc page."""

    def build(y_true: IntoExpr, y_pred: IntoExpr, *, pos_label: Any = 1,
              sample_weight: IntoExpr | None = None) -> pl.Expr:  # fmt: skip
        return metric_value(name, Rows(y_true, y_pred, pos_label, sample_weight)).alias(name)

    build.__name__ = build.__qualname__ = name
    build.__module__ = __name__
    build.__doc__ = f"""{title} ({peer}).

    Formula: ``{METRICS[name].description}`` over weighted confusion counts, from
    ``polfair.core.metrics.METRICS["{name}"]``.
{_PARAMETERS}

    Returns
    -------
    pl.Expr or float
        With names or expressions: a Float64 aggregation named ``"{name}"``, a fraction in [0, 1];
        use it in ``select``, ``group_by(...).agg``, or with ``.over(...)``. With data: its value,
        a ``numpy.float64`` as fairlearn returns (NaN where undefined).
{_RAISES}

    Notes
    -----
    Edge case: {edge}
    Source: fairlearn 0.15 ``fairlearn.metrics``; aif360 ``ClassificationMetric``.

    Examples
    --------
    >>> import polars as pl
    >>> import polfair.compat.fairlearn as pfx
    >>> df = pl.DataFrame({{"y": [1, 1, 0, 0, 1], "p": [1, 0, 1, 0, 1], "g": ["a", "a", "a", "b", "b"]}})
    >>> df.group_by("g").agg(pfx.{name}("y", "p")).sort("g")["{name}"].to_list()
    {by_group}
    >>> pfx.{name}([1, 1, 0, 0, 1], [1, 0, 1, 0, 1])  # data in, a number out (fairlearn's way)
    {overall}
    """
    return accepts_data(build)


#: When a rate is undefined, by the counts in its denominator (``METRICS[name].denominator``).
_UNDEFINED = {
    frozenset({"tp", "fn"}): "with no positives (y = pos)",
    frozenset({"fp", "tn"}): "with no negatives (y ≠ pos)",
    frozenset({"tp", "fp"}): "with no predicted positives",
    frozenset({"tn", "fn"}): "with no predicted negatives",
    frozenset({"tp", "fp", "tn", "fn"}): "on no (valid) rows",
}


def _edge(name: str, peer_value: str) -> str:
    """The docstring's edge case of a rate: when it is undefined (null here), and what the peer returns."""
    denominator = METRICS[name].denominator
    assert denominator is not None  # a rate
    counts = frozenset(denominator(Counts(pl.col)).meta.root_names())
    return f"{_UNDEFINED[counts]} the value is **null** ({peer_value})."


_FL = "fairlearn returns 0.0"
selection_rate = _rate_function("selection_rate", "Selection rate P(ŷ = pos)", "fairlearn's ``selection_rate``",
                                _edge("selection_rate", _FL), "[0.666..., 0.5]", "np.float64(0.6)")
base_rate = _rate_function("base_rate", "Base rate P(y = pos)", "fairlearn: the mean of ``y_true == pos_label``",
                           _edge("base_rate", _FL), "[0.666..., 0.5]", "np.float64(0.6)")
true_positive_rate = _rate_function(
    "true_positive_rate", "True positive rate (recall) P(ŷ = pos | y = pos)", "fairlearn's ``true_positive_rate``",
    _edge("true_positive_rate", _FL), "[0.5, 1.0]", "np.float64(0.666...)")
true_negative_rate = _rate_function(
    "true_negative_rate", "True negative rate (specificity) P(ŷ ≠ pos | y ≠ pos)",
    "fairlearn's ``true_negative_rate``", _edge("true_negative_rate", _FL), "[0.0, 1.0]", "np.float64(0.5)")
false_positive_rate = _rate_function("false_positive_rate", "False positive rate P(ŷ = pos | y ≠ pos)",
                                     "fairlearn's ``false_positive_rate``", _edge("false_positive_rate", _FL),
                                     "[1.0, 0.0]", "np.float64(0.5)")
false_negative_rate = _rate_function(
    "false_negative_rate", "False negative rate P(ŷ ≠ pos | y = pos)", "fairlearn's ``false_negative_rate``",
    _edge("false_negative_rate", _FL), "[0.5, 0.0]", "np.float64(0.333...)")
positive_predictive_value = _rate_function(
    "positive_predictive_value", "Positive predictive value (precision) P(y = pos | ŷ = pos)",
    "scikit-learn's ``precision_score``", _edge("positive_predictive_value", "scikit-learn returns 0.0 with a warning"),
    "[0.5, 1.0]", "np.float64(0.666...)")
negative_predictive_value = _rate_function(
    "negative_predictive_value", "Negative predictive value P(y ≠ pos | ŷ ≠ pos)", "no fairlearn function",
    _edge("negative_predictive_value", "aif360 returns 0.0"), "[0.0, 1.0]", "np.float64(0.5)")
false_discovery_rate = _rate_function("false_discovery_rate", "False discovery rate P(y ≠ pos | ŷ = pos)",
                                      "no fairlearn function", _edge("false_discovery_rate", "aif360 returns 0.0"),
                                      "[0.5, 0.0]", "np.float64(0.333...)")
false_omission_rate = _rate_function(
    "false_omission_rate", "False omission rate P(y = pos | ŷ ≠ pos)", "no fairlearn function",
    _edge("false_omission_rate", "aif360 returns 0.0"), "[1.0, 0.0]", "np.float64(0.5)")
accuracy = _rate_function("accuracy", "Accuracy P(ŷ = y), positive against the rest", "scikit-learn's ``accuracy_score``",
                          _edge("accuracy", "scikit-learn returns NaN"), "[0.333..., 1.0]", "np.float64(0.6)")
error_rate = _rate_function("error_rate", "Error rate P(ŷ ≠ y), positive against the rest",
                            "scikit-learn's ``zero_one_loss``", _edge("error_rate", "scikit-learn returns NaN"),
                            "[0.666..., 0.0]", "np.float64(0.4)")
