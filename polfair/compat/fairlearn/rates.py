"""Confusion-count rates as Polars aggregation expressions (fairlearn's rate functions, and :func:`metric`)."""

from __future__ import annotations

from typing import Any

import polars as pl

from polfair.compat.fairlearn._rows import Rows, metric_value, resolve_metric
from polfair.core._typing import IntoExpr

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
        ``pos_label``; a boolean expression such as ``pl.col("score") >= 0.5`` works with
        ``pos_label=1``).
    pos_label
        The positive (favorable) label; every other value is negative. Default ``1``.
    sample_weight
        Optional column name or expression of per-row weights (Float64).

    Returns
    -------
    pl.Expr
        Float64 aggregation named ``name`` (the canonical metric name): rates are fractions in
        [0, 1], counts are weighted sums. Null where the denominator is 0.

    Raises
    ------
    PolfairError
        ``name`` is unknown, or ``pos_label`` is ``None``.
    TypeError
        A column argument is neither a name nor an expression.

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
    """
    canonical = resolve_metric(name)
    return metric_value(canonical, Rows(y_true, y_pred, pos_label, sample_weight)).alias(canonical)


def _rate_fn(name: str, y_true: IntoExpr, y_pred: IntoExpr, pos_label: Any, sample_weight: IntoExpr | None) -> pl.Expr:
    return metric_value(name, Rows(y_true, y_pred, pos_label, sample_weight)).alias(name)


def selection_rate(y_true: IntoExpr, y_pred: IntoExpr, *, pos_label: Any = 1,
                   sample_weight: IntoExpr | None = None) -> pl.Expr:  # fmt: skip
    """Selection rate P(ŷ = pos), as a Polars aggregation expression (fairlearn's ``selection_rate``).

    Formula: ``(TP + FP) / (P + N)`` over weighted confusion counts, from
    ``polfair.core.metrics.METRICS["selection_rate"]``.

    Parameters
    ----------
    y_true, y_pred
        Column names or expressions of the true and predicted labels (any dtype comparable with
        ``pos_label``; a boolean expression such as ``pl.col("score") >= 0.5`` works with
        ``pos_label=1``). Rows with a null label, prediction or weight are left out.
    pos_label
        The positive label; every other value is negative. Default ``1``.
    sample_weight
        Optional column name or expression of per-row weights (cast to Float64).

    Returns
    -------
    pl.Expr
        Float64 aggregation named ``"selection_rate"``, a fraction in [0, 1]. Use it in ``select``,
        ``group_by(...).agg``, or with ``.over(...)``.

    Raises
    ------
    PolfairError
        ``pos_label`` is ``None``.
    TypeError
        A column argument is neither a name nor an expression.

    Notes
    -----
    Edge case: on no (valid) rows the value is **null** (fairlearn returns 0.0, or raises on empty input).
    Source: fairlearn 0.15 ``fairlearn.metrics``; aif360 ``ClassificationMetric``.

    Examples
    --------
    >>> import polars as pl
    >>> import polfair.compat.fairlearn as pfx
    >>> df = pl.DataFrame({"y": [1, 1, 0, 0, 1], "p": [1, 0, 1, 0, 1], "g": ["a", "a", "a", "b", "b"]})
    >>> df.group_by("g").agg(pfx.selection_rate("y", "p")).sort("g")["selection_rate"].to_list()
    [0.666..., 0.5]
    """
    return _rate_fn("selection_rate", y_true, y_pred, pos_label, sample_weight)


def base_rate(y_true: IntoExpr, y_pred: IntoExpr, *, pos_label: Any = 1,
              sample_weight: IntoExpr | None = None) -> pl.Expr:  # fmt: skip
    """Base rate P(y = pos), as a Polars aggregation expression (fairlearn's ``mean of y_true == pos_label``).

    Formula: ``P / (P + N)`` over weighted confusion counts, from
    ``polfair.core.metrics.METRICS["base_rate"]``.

    Parameters
    ----------
    y_true, y_pred
        Column names or expressions of the true and predicted labels (any dtype comparable with
        ``pos_label``; a boolean expression such as ``pl.col("score") >= 0.5`` works with
        ``pos_label=1``). Rows with a null label, prediction or weight are left out.
    pos_label
        The positive label; every other value is negative. Default ``1``.
    sample_weight
        Optional column name or expression of per-row weights (cast to Float64).

    Returns
    -------
    pl.Expr
        Float64 aggregation named ``"base_rate"``, a fraction in [0, 1]. Use it in ``select``,
        ``group_by(...).agg``, or with ``.over(...)``.

    Raises
    ------
    PolfairError
        ``pos_label`` is ``None``.
    TypeError
        A column argument is neither a name nor an expression.

    Notes
    -----
    Edge case: on no (valid) rows the value is **null** (fairlearn returns 0.0).
    Source: fairlearn 0.15 ``fairlearn.metrics``; aif360 ``ClassificationMetric``.

    Examples
    --------
    >>> import polars as pl
    >>> import polfair.compat.fairlearn as pfx
    >>> df = pl.DataFrame({"y": [1, 1, 0, 0, 1], "p": [1, 0, 1, 0, 1], "g": ["a", "a", "a", "b", "b"]})
    >>> df.group_by("g").agg(pfx.base_rate("y", "p")).sort("g")["base_rate"].to_list()
    [0.666..., 0.5]
    """
    return _rate_fn("base_rate", y_true, y_pred, pos_label, sample_weight)


def true_positive_rate(y_true: IntoExpr, y_pred: IntoExpr, *, pos_label: Any = 1,
                       sample_weight: IntoExpr | None = None) -> pl.Expr:  # fmt: skip
    """True positive rate (recall) P(ŷ = pos | y = pos) as a Polars aggregation (fairlearn's ``true_positive_rate``).

    Formula: ``TP / P`` over weighted confusion counts, from
    ``polfair.core.metrics.METRICS["true_positive_rate"]``.

    Parameters
    ----------
    y_true, y_pred
        Column names or expressions of the true and predicted labels (any dtype comparable with
        ``pos_label``; a boolean expression such as ``pl.col("score") >= 0.5`` works with
        ``pos_label=1``). Rows with a null label, prediction or weight are left out.
    pos_label
        The positive label; every other value is negative. Default ``1``.
    sample_weight
        Optional column name or expression of per-row weights (cast to Float64).

    Returns
    -------
    pl.Expr
        Float64 aggregation named ``"true_positive_rate"``, a fraction in [0, 1]. Use it in ``select``,
        ``group_by(...).agg``, or with ``.over(...)``.

    Raises
    ------
    PolfairError
        ``pos_label`` is ``None``.
    TypeError
        A column argument is neither a name nor an expression.

    Notes
    -----
    Edge case: with no positives (y = pos) the value is **null** (fairlearn returns 0.0).
    Source: fairlearn 0.15 ``fairlearn.metrics``; aif360 ``ClassificationMetric``.

    Examples
    --------
    >>> import polars as pl
    >>> import polfair.compat.fairlearn as pfx
    >>> df = pl.DataFrame({"y": [1, 1, 0, 0, 1], "p": [1, 0, 1, 0, 1], "g": ["a", "a", "a", "b", "b"]})
    >>> df.group_by("g").agg(pfx.true_positive_rate("y", "p")).sort("g")["true_positive_rate"].to_list()
    [0.5, 1.0]
    """
    return _rate_fn("true_positive_rate", y_true, y_pred, pos_label, sample_weight)


def true_negative_rate(y_true: IntoExpr, y_pred: IntoExpr, *, pos_label: Any = 1,
                       sample_weight: IntoExpr | None = None) -> pl.Expr:  # fmt: skip
    """True negative rate (specificity) P(ŷ ≠ pos | y ≠ pos) as an aggregation (fairlearn's ``true_negative_rate``).

    Formula: ``TN / N`` over weighted confusion counts, from
    ``polfair.core.metrics.METRICS["true_negative_rate"]``.

    Parameters
    ----------
    y_true, y_pred
        Column names or expressions of the true and predicted labels (any dtype comparable with
        ``pos_label``; a boolean expression such as ``pl.col("score") >= 0.5`` works with
        ``pos_label=1``). Rows with a null label, prediction or weight are left out.
    pos_label
        The positive label; every other value is negative. Default ``1``.
    sample_weight
        Optional column name or expression of per-row weights (cast to Float64).

    Returns
    -------
    pl.Expr
        Float64 aggregation named ``"true_negative_rate"``, a fraction in [0, 1]. Use it in ``select``,
        ``group_by(...).agg``, or with ``.over(...)``.

    Raises
    ------
    PolfairError
        ``pos_label`` is ``None``.
    TypeError
        A column argument is neither a name nor an expression.

    Notes
    -----
    Edge case: with no negatives the value is **null** (fairlearn returns 0.0).
    Source: fairlearn 0.15 ``fairlearn.metrics``; aif360 ``ClassificationMetric``.

    Examples
    --------
    >>> import polars as pl
    >>> import polfair.compat.fairlearn as pfx
    >>> df = pl.DataFrame({"y": [1, 1, 0, 0, 1], "p": [1, 0, 1, 0, 1], "g": ["a", "a", "a", "b", "b"]})
    >>> df.group_by("g").agg(pfx.true_negative_rate("y", "p")).sort("g")["true_negative_rate"].to_list()
    [0.0, 1.0]
    """
    return _rate_fn("true_negative_rate", y_true, y_pred, pos_label, sample_weight)


def false_positive_rate(y_true: IntoExpr, y_pred: IntoExpr, *, pos_label: Any = 1,
                        sample_weight: IntoExpr | None = None) -> pl.Expr:  # fmt: skip
    """False positive rate P(ŷ = pos | y ≠ pos) as a Polars aggregation (fairlearn's ``false_positive_rate``).

    Formula: ``FP / N`` over weighted confusion counts, from
    ``polfair.core.metrics.METRICS["false_positive_rate"]``.

    Parameters
    ----------
    y_true, y_pred
        Column names or expressions of the true and predicted labels (any dtype comparable with
        ``pos_label``; a boolean expression such as ``pl.col("score") >= 0.5`` works with
        ``pos_label=1``). Rows with a null label, prediction or weight are left out.
    pos_label
        The positive label; every other value is negative. Default ``1``.
    sample_weight
        Optional column name or expression of per-row weights (cast to Float64).

    Returns
    -------
    pl.Expr
        Float64 aggregation named ``"false_positive_rate"``, a fraction in [0, 1]. Use it in ``select``,
        ``group_by(...).agg``, or with ``.over(...)``.

    Raises
    ------
    PolfairError
        ``pos_label`` is ``None``.
    TypeError
        A column argument is neither a name nor an expression.

    Notes
    -----
    Edge case: with no negatives the value is **null** (fairlearn returns 0.0).
    Source: fairlearn 0.15 ``fairlearn.metrics``; aif360 ``ClassificationMetric``.

    Examples
    --------
    >>> import polars as pl
    >>> import polfair.compat.fairlearn as pfx
    >>> df = pl.DataFrame({"y": [1, 1, 0, 0, 1], "p": [1, 0, 1, 0, 1], "g": ["a", "a", "a", "b", "b"]})
    >>> df.group_by("g").agg(pfx.false_positive_rate("y", "p")).sort("g")["false_positive_rate"].to_list()
    [1.0, 0.0]
    """
    return _rate_fn("false_positive_rate", y_true, y_pred, pos_label, sample_weight)


def false_negative_rate(y_true: IntoExpr, y_pred: IntoExpr, *, pos_label: Any = 1,
                        sample_weight: IntoExpr | None = None) -> pl.Expr:  # fmt: skip
    """False negative rate P(ŷ ≠ pos | y = pos) as a Polars aggregation (fairlearn's ``false_negative_rate``).

    Formula: ``FN / P`` over weighted confusion counts, from
    ``polfair.core.metrics.METRICS["false_negative_rate"]``.

    Parameters
    ----------
    y_true, y_pred
        Column names or expressions of the true and predicted labels (any dtype comparable with
        ``pos_label``; a boolean expression such as ``pl.col("score") >= 0.5`` works with
        ``pos_label=1``). Rows with a null label, prediction or weight are left out.
    pos_label
        The positive label; every other value is negative. Default ``1``.
    sample_weight
        Optional column name or expression of per-row weights (cast to Float64).

    Returns
    -------
    pl.Expr
        Float64 aggregation named ``"false_negative_rate"``, a fraction in [0, 1]. Use it in ``select``,
        ``group_by(...).agg``, or with ``.over(...)``.

    Raises
    ------
    PolfairError
        ``pos_label`` is ``None``.
    TypeError
        A column argument is neither a name nor an expression.

    Notes
    -----
    Edge case: with no positives the value is **null** (fairlearn returns 0.0).
    Source: fairlearn 0.15 ``fairlearn.metrics``; aif360 ``ClassificationMetric``.

    Examples
    --------
    >>> import polars as pl
    >>> import polfair.compat.fairlearn as pfx
    >>> df = pl.DataFrame({"y": [1, 1, 0, 0, 1], "p": [1, 0, 1, 0, 1], "g": ["a", "a", "a", "b", "b"]})
    >>> df.group_by("g").agg(pfx.false_negative_rate("y", "p")).sort("g")["false_negative_rate"].to_list()
    [0.5, 0.0]
    """
    return _rate_fn("false_negative_rate", y_true, y_pred, pos_label, sample_weight)


def positive_predictive_value(y_true: IntoExpr, y_pred: IntoExpr, *, pos_label: Any = 1,
                              sample_weight: IntoExpr | None = None) -> pl.Expr:  # fmt: skip
    """Positive predictive value (precision) P(y = pos | ŷ = pos) as an aggregation (sklearn's precision).

    Formula: ``TP / (TP + FP)`` over weighted confusion counts, from
    ``polfair.core.metrics.METRICS["positive_predictive_value"]``.

    Parameters
    ----------
    y_true, y_pred
        Column names or expressions of the true and predicted labels (any dtype comparable with
        ``pos_label``; a boolean expression such as ``pl.col("score") >= 0.5`` works with
        ``pos_label=1``). Rows with a null label, prediction or weight are left out.
    pos_label
        The positive label; every other value is negative. Default ``1``.
    sample_weight
        Optional column name or expression of per-row weights (cast to Float64).

    Returns
    -------
    pl.Expr
        Float64 aggregation named ``"positive_predictive_value"``, a fraction in [0, 1]. Use it in ``select``,
        ``group_by(...).agg``, or with ``.over(...)``.

    Raises
    ------
    PolfairError
        ``pos_label`` is ``None``.
    TypeError
        A column argument is neither a name nor an expression.

    Notes
    -----
    Edge case: with no predicted positives the value is **null** (fairlearn returns 0.0 with
    zero_division='warn').
    Source: fairlearn 0.15 ``fairlearn.metrics``; aif360 ``ClassificationMetric``.

    Examples
    --------
    >>> import polars as pl
    >>> import polfair.compat.fairlearn as pfx
    >>> df = pl.DataFrame({"y": [1, 1, 0, 0, 1], "p": [1, 0, 1, 0, 1], "g": ["a", "a", "a", "b", "b"]})
    >>> df.group_by("g").agg(pfx.positive_predictive_value("y", "p")).sort("g")["positive_predictive_value"].to_list()
    [0.5, 1.0]
    """
    return _rate_fn("positive_predictive_value", y_true, y_pred, pos_label, sample_weight)


def negative_predictive_value(y_true: IntoExpr, y_pred: IntoExpr, *, pos_label: Any = 1,
                              sample_weight: IntoExpr | None = None) -> pl.Expr:  # fmt: skip
    """Negative predictive value P(y ≠ pos | ŷ ≠ pos) as a Polars aggregation (no fairlearn function).

    Formula: ``TN / (TN + FN)`` over weighted confusion counts, from
    ``polfair.core.metrics.METRICS["negative_predictive_value"]``.

    Parameters
    ----------
    y_true, y_pred
        Column names or expressions of the true and predicted labels (any dtype comparable with
        ``pos_label``; a boolean expression such as ``pl.col("score") >= 0.5`` works with
        ``pos_label=1``). Rows with a null label, prediction or weight are left out.
    pos_label
        The positive label; every other value is negative. Default ``1``.
    sample_weight
        Optional column name or expression of per-row weights (cast to Float64).

    Returns
    -------
    pl.Expr
        Float64 aggregation named ``"negative_predictive_value"``, a fraction in [0, 1]. Use it in ``select``,
        ``group_by(...).agg``, or with ``.over(...)``.

    Raises
    ------
    PolfairError
        ``pos_label`` is ``None``.
    TypeError
        A column argument is neither a name nor an expression.

    Notes
    -----
    Edge case: with no predicted negatives the value is **null** (fairlearn returns 0.0 in aif360).
    Source: fairlearn 0.15 ``fairlearn.metrics``; aif360 ``ClassificationMetric``.

    Examples
    --------
    >>> import polars as pl
    >>> import polfair.compat.fairlearn as pfx
    >>> df = pl.DataFrame({"y": [1, 1, 0, 0, 1], "p": [1, 0, 1, 0, 1], "g": ["a", "a", "a", "b", "b"]})
    >>> df.group_by("g").agg(pfx.negative_predictive_value("y", "p")).sort("g")["negative_predictive_value"].to_list()
    [0.0, 1.0]
    """
    return _rate_fn("negative_predictive_value", y_true, y_pred, pos_label, sample_weight)


def false_discovery_rate(y_true: IntoExpr, y_pred: IntoExpr, *, pos_label: Any = 1,
                         sample_weight: IntoExpr | None = None) -> pl.Expr:  # fmt: skip
    """False discovery rate P(y ≠ pos | ŷ = pos) as a Polars aggregation (no fairlearn function).

    Formula: ``FP / (TP + FP)`` over weighted confusion counts, from
    ``polfair.core.metrics.METRICS["false_discovery_rate"]``.

    Parameters
    ----------
    y_true, y_pred
        Column names or expressions of the true and predicted labels (any dtype comparable with
        ``pos_label``; a boolean expression such as ``pl.col("score") >= 0.5`` works with
        ``pos_label=1``). Rows with a null label, prediction or weight are left out.
    pos_label
        The positive label; every other value is negative. Default ``1``.
    sample_weight
        Optional column name or expression of per-row weights (cast to Float64).

    Returns
    -------
    pl.Expr
        Float64 aggregation named ``"false_discovery_rate"``, a fraction in [0, 1]. Use it in ``select``,
        ``group_by(...).agg``, or with ``.over(...)``.

    Raises
    ------
    PolfairError
        ``pos_label`` is ``None``.
    TypeError
        A column argument is neither a name nor an expression.

    Notes
    -----
    Edge case: with no predicted positives the value is **null** (fairlearn returns 0.0 in aif360).
    Source: fairlearn 0.15 ``fairlearn.metrics``; aif360 ``ClassificationMetric``.

    Examples
    --------
    >>> import polars as pl
    >>> import polfair.compat.fairlearn as pfx
    >>> df = pl.DataFrame({"y": [1, 1, 0, 0, 1], "p": [1, 0, 1, 0, 1], "g": ["a", "a", "a", "b", "b"]})
    >>> df.group_by("g").agg(pfx.false_discovery_rate("y", "p")).sort("g")["false_discovery_rate"].to_list()
    [0.5, 0.0]
    """
    return _rate_fn("false_discovery_rate", y_true, y_pred, pos_label, sample_weight)


def false_omission_rate(y_true: IntoExpr, y_pred: IntoExpr, *, pos_label: Any = 1,
                        sample_weight: IntoExpr | None = None) -> pl.Expr:  # fmt: skip
    """False omission rate P(y = pos | ŷ ≠ pos) as a Polars aggregation (no fairlearn function).

    Formula: ``FN / (TN + FN)`` over weighted confusion counts, from
    ``polfair.core.metrics.METRICS["false_omission_rate"]``.

    Parameters
    ----------
    y_true, y_pred
        Column names or expressions of the true and predicted labels (any dtype comparable with
        ``pos_label``; a boolean expression such as ``pl.col("score") >= 0.5`` works with
        ``pos_label=1``). Rows with a null label, prediction or weight are left out.
    pos_label
        The positive label; every other value is negative. Default ``1``.
    sample_weight
        Optional column name or expression of per-row weights (cast to Float64).

    Returns
    -------
    pl.Expr
        Float64 aggregation named ``"false_omission_rate"``, a fraction in [0, 1]. Use it in ``select``,
        ``group_by(...).agg``, or with ``.over(...)``.

    Raises
    ------
    PolfairError
        ``pos_label`` is ``None``.
    TypeError
        A column argument is neither a name nor an expression.

    Notes
    -----
    Edge case: with no predicted negatives the value is **null** (fairlearn returns 0.0 in aif360).
    Source: fairlearn 0.15 ``fairlearn.metrics``; aif360 ``ClassificationMetric``.

    Examples
    --------
    >>> import polars as pl
    >>> import polfair.compat.fairlearn as pfx
    >>> df = pl.DataFrame({"y": [1, 1, 0, 0, 1], "p": [1, 0, 1, 0, 1], "g": ["a", "a", "a", "b", "b"]})
    >>> df.group_by("g").agg(pfx.false_omission_rate("y", "p")).sort("g")["false_omission_rate"].to_list()
    [1.0, 0.0]
    """
    return _rate_fn("false_omission_rate", y_true, y_pred, pos_label, sample_weight)


def accuracy(y_true: IntoExpr, y_pred: IntoExpr, *, pos_label: Any = 1,
             sample_weight: IntoExpr | None = None) -> pl.Expr:  # fmt: skip
    """Accuracy P(ŷ = y) (positive vs the rest) as a Polars aggregation (``sklearn.metrics.accuracy_score``).

    Formula: ``(TP + TN) / (P + N)`` over weighted confusion counts, from
    ``polfair.core.metrics.METRICS["accuracy"]``.

    Parameters
    ----------
    y_true, y_pred
        Column names or expressions of the true and predicted labels (any dtype comparable with
        ``pos_label``; a boolean expression such as ``pl.col("score") >= 0.5`` works with
        ``pos_label=1``). Rows with a null label, prediction or weight are left out.
    pos_label
        The positive label; every other value is negative. Default ``1``.
    sample_weight
        Optional column name or expression of per-row weights (cast to Float64).

    Returns
    -------
    pl.Expr
        Float64 aggregation named ``"accuracy"``, a fraction in [0, 1]. Use it in ``select``,
        ``group_by(...).agg``, or with ``.over(...)``.

    Raises
    ------
    PolfairError
        ``pos_label`` is ``None``.
    TypeError
        A column argument is neither a name nor an expression.

    Notes
    -----
    Edge case: on no (valid) rows the value is **null** (fairlearn returns 0.0 or NaN).
    Source: fairlearn 0.15 ``fairlearn.metrics``; aif360 ``ClassificationMetric``.

    Examples
    --------
    >>> import polars as pl
    >>> import polfair.compat.fairlearn as pfx
    >>> df = pl.DataFrame({"y": [1, 1, 0, 0, 1], "p": [1, 0, 1, 0, 1], "g": ["a", "a", "a", "b", "b"]})
    >>> df.group_by("g").agg(pfx.accuracy("y", "p")).sort("g")["accuracy"].to_list()
    [0.333..., 1.0]
    """
    return _rate_fn("accuracy", y_true, y_pred, pos_label, sample_weight)


def error_rate(y_true: IntoExpr, y_pred: IntoExpr, *, pos_label: Any = 1,
               sample_weight: IntoExpr | None = None) -> pl.Expr:  # fmt: skip
    """Error rate P(ŷ ≠ y) (positive vs the rest) as a Polars aggregation (``sklearn.metrics.zero_one_loss``).

    Formula: ``1 - accuracy`` over weighted confusion counts, from
    ``polfair.core.metrics.METRICS["error_rate"]``.

    Parameters
    ----------
    y_true, y_pred
        Column names or expressions of the true and predicted labels (any dtype comparable with
        ``pos_label``; a boolean expression such as ``pl.col("score") >= 0.5`` works with
        ``pos_label=1``). Rows with a null label, prediction or weight are left out.
    pos_label
        The positive label; every other value is negative. Default ``1``.
    sample_weight
        Optional column name or expression of per-row weights (cast to Float64).

    Returns
    -------
    pl.Expr
        Float64 aggregation named ``"error_rate"``, a fraction in [0, 1]. Use it in ``select``,
        ``group_by(...).agg``, or with ``.over(...)``.

    Raises
    ------
    PolfairError
        ``pos_label`` is ``None``.
    TypeError
        A column argument is neither a name nor an expression.

    Notes
    -----
    Edge case: on no (valid) rows the value is **null** (fairlearn returns 0.0 or NaN).
    Source: fairlearn 0.15 ``fairlearn.metrics``; aif360 ``ClassificationMetric``.

    Examples
    --------
    >>> import polars as pl
    >>> import polfair.compat.fairlearn as pfx
    >>> df = pl.DataFrame({"y": [1, 1, 0, 0, 1], "p": [1, 0, 1, 0, 1], "g": ["a", "a", "a", "b", "b"]})
    >>> df.group_by("g").agg(pfx.error_rate("y", "p")).sort("g")["error_rate"].to_list()
    [0.666..., 0.0]
    """
    return _rate_fn("error_rate", y_true, y_pred, pos_label, sample_weight)
