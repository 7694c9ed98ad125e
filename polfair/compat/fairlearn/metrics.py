"""Fairness metrics as Polars expressions: fairlearn's functions, usable inside any Polars query.

Every function here returns a ``pl.Expr`` that *aggregates* rows, so it works wherever an
aggregation works: ``df.select(...)``, ``df.group_by("model").agg(...)`` (one value per model,
fairlearn's *control features*), ``expr.over("model")`` and on ``pl.LazyFrame`` (any engine,
streaming included). Nothing is computed until the query runs.

The formulas are not re-typed here: each rate is ``polfair.core.metrics.METRICS[name]``'s numerator and
denominator, with the :class:`polfair.core.metrics.Counts` accessor bound to aggregations over the raw
rows, e.g. ``tp = Σ w·1[y = pos ∧ ŷ = pos]``. A group-wise value (``sensitive_features=``) is the same
aggregation taken ``.over(sensitive_features)``.

Semantics follow fairlearn 0.15 (``fairlearn.metrics``), with these deliberate differences:

* **Undefined rates are null, not 0.0.** fairlearn's ``true_positive_rate`` of a group without
  positives is ``0.0`` (scikit-learn's ``normalize="true"`` turns 0/0 into 0, silently), which then
  makes ``equalized_odds_ratio`` 0. Here such a rate is ``null``, and so is every disparity that
  would read it (a disparity over groups is null as soon as one group's rate is undefined).
  Ratios whose denominator is 0 are null where fairlearn gives NaN.
* **Missing values.** Rows with a null ``y_true``, ``y_pred`` or ``sample_weight`` are left out of
  every count (fairlearn raises); a null sensitive feature is its own group (fairlearn 0.15
  raises).
* **Labels.** ``pos_label`` (default ``1``) is the positive class; every other value is negative
  (fairlearn's rates insist on at most two distinct labels). ``pos_label`` must have the column's
  type (``pos_label="yes"`` for string labels), else Polars raises when the query runs.
* **Multiclass.** :func:`demographic_parity_difference` with ``pos_label=None`` compares every
  class, as pytorch-ignite's ``DemographicParityDifference`` does (fairlearn raises).

Weights are used as given (no check for negative values: the report, :func:`polfair.fairness_report`,
validates them).
"""

from __future__ import annotations

from typing import Any, Callable, Literal, Sequence, Union

import polars as pl

from polfair.exceptions import PolfairError
from polfair.core.metrics import ALIASES, METRICS, Counts, between_groups_difference, between_groups_ratio, rate
from polfair.core._args import as_expr

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

IntoExpr = Union[str, pl.Expr]
Method = Literal["between_groups", "to_overall"]
Agg = Literal["worst_case", "mean"]
SensitiveFeatures = Union[IntoExpr, Sequence[IntoExpr]]

#: Metrics of :data:`polfair.core.metrics.METRICS` available as expressions (the score-based
#: ``generalized_*`` ones need a score column and live in the report only).
EXPR_METRICS: tuple[str, ...] = tuple(n for n in METRICS if "generalized" not in n)

_CELLS = ("tp", "fp", "tn", "fn")


def _features(sensitive_features: SensitiveFeatures | None, role: str = "sensitive_features") -> list[pl.Expr]:
    if sensitive_features is None:
        msg = f"{role} is required: name the column(s) whose groups are compared, e.g. {role}=['sex']"
        raise PolfairError(msg)
    items = [sensitive_features] if isinstance(sensitive_features, (str, pl.Expr)) else list(sensitive_features)
    if not items:
        msg = f"{role} must name at least one column or expression, got an empty sequence"
        raise PolfairError(msg)
    return [as_expr(s, role) for s in items]


def _check_choice(name: str, value: Any, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        msg = f"{name} must be one of {set(allowed)}, got {value!r}"
        raise PolfairError(msg)


def _resolve(name: str) -> str:
    canonical = ALIASES.get(name, name)
    if canonical not in EXPR_METRICS:
        msg = f"unknown metric {name!r}; use one of {list(EXPR_METRICS)} or an alias in {sorted(ALIASES)}"
        raise PolfairError(msg)
    return canonical


class _Rows:
    """The confusion indicators of each row, and the :class:`Counts` that sum them.

    ``tp = Σ w·1[y = pos ∧ ŷ = pos]`` and so on. A row with a null label, prediction or weight is
    in none of the four cells (Kleene logic never yields ``True`` from a null, and a null weight
    makes the product null, which ``sum`` skips).
    """

    def __init__(self, y_true: IntoExpr, y_pred: IntoExpr, pos_label: Any, sample_weight: IntoExpr | None) -> None:
        if pos_label is None:
            msg = (
                "pos_label=None (every class compared) is supported by demographic_parity_difference "
                "only; give the positive class, e.g. pos_label=1"
            )
            raise PolfairError(msg)
        t = as_expr(y_true, "y_true") == pos_label
        p = as_expr(y_pred, "y_pred") == pos_label
        self.cells = {"tp": t & p, "fp": ~t & p, "tn": ~t & ~p, "fn": t & ~p}
        self.w = pl.lit(1.0) if sample_weight is None else as_expr(sample_weight, "sample_weight").cast(pl.Float64)

    def counts(self, window: list[pl.Expr] | None = None) -> Counts:
        def get(name: str) -> pl.Expr:
            if name not in self.cells:
                raise AttributeError(name)
            total = (self.cells[name].cast(pl.Float64) * self.w).sum()
            return total if window is None else total.over(window)

        return Counts(get)


def _value(name: str, rows: _Rows, window: list[pl.Expr] | None = None) -> pl.Expr:
    """The metric, null where its denominator is 0; per row of its group when ``window`` is given."""
    return METRICS[name].expr(rows.counts(window))


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
    canonical = _resolve(name)
    return _value(canonical, _Rows(y_true, y_pred, pos_label, sample_weight)).alias(canonical)


def _rate_fn(name: str, y_true: IntoExpr, y_pred: IntoExpr, pos_label: Any, sample_weight: IntoExpr | None) -> pl.Expr:
    return _value(name, _Rows(y_true, y_pred, pos_label, sample_weight)).alias(name)


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
    """True positive rate (recall) P(ŷ = pos | y = pos), as a Polars aggregation expression (fairlearn's
    ``true_positive_rate``).

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
    """True negative rate (specificity) P(ŷ ≠ pos | y ≠ pos), as a Polars aggregation expression (fairlearn's
    ``true_negative_rate``).

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
    """False positive rate P(ŷ = pos | y ≠ pos), as a Polars aggregation expression (fairlearn's
    ``false_positive_rate``).

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
    """False negative rate P(ŷ ≠ pos | y = pos), as a Polars aggregation expression (fairlearn's
    ``false_negative_rate``).

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
    """Positive predictive value (precision) P(y = pos | ŷ = pos), as a Polars aggregation expression
    (fairlearn's ``sklearn.metrics.precision_score``).

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
    """Negative predictive value P(y ≠ pos | ŷ ≠ pos), as a Polars aggregation expression (fairlearn's ``(no
    fairlearn function)``).

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
    """False discovery rate P(y ≠ pos | ŷ = pos), as a Polars aggregation expression (fairlearn's ``(no fairlearn
    function)``).

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
    """False omission rate P(y = pos | ŷ ≠ pos), as a Polars aggregation expression (fairlearn's ``(no fairlearn
    function)``).

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
    """Accuracy P(ŷ = y) (binary: positive vs the rest), as a Polars aggregation expression (fairlearn's
    ``sklearn.metrics.accuracy_score``).

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
    """Error rate P(ŷ ≠ y) (binary: positive vs the rest), as a Polars aggregation expression (fairlearn's
    ``sklearn.metrics.zero_one_loss``).

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


# --------------------------------------------------------------------------------------------
# group-wise aggregates: group_min / group_max / difference / ratio (fairlearn MetricFrame)
# --------------------------------------------------------------------------------------------


def _all_defined(v: pl.Expr) -> pl.Expr:
    return v.null_count() == 0


def _difference(v: pl.Expr, overall: pl.Expr, method: str) -> pl.Expr:
    if method == "between_groups":
        return between_groups_difference(v)
    out = pl.when(overall.is_not_null()).then((v - overall).abs().max())
    return pl.when(_all_defined(v)).then(out)


def _ratio(v: pl.Expr, overall: pl.Expr, method: str) -> pl.Expr:
    if method == "between_groups":
        return between_groups_ratio(v)
    r = rate(v, overall)
    # fairlearn's ratio_sub_one: a ratio above 1 is inverted; null where overall is 0
    out = pl.when(_all_defined(r)).then(pl.when(r > 1.0).then(1.0 / r).otherwise(r).min())
    return pl.when(_all_defined(v)).then(out)


def _setup(
    y_true: IntoExpr, y_pred: IntoExpr, sensitive_features: SensitiveFeatures | None, pos_label: Any,
    sample_weight: IntoExpr | None, method: str = "between_groups",
) -> tuple[_Rows, list[pl.Expr]]:  # fmt: skip
    _check_choice("method", method, ("between_groups", "to_overall"))
    return _Rows(y_true, y_pred, pos_label, sample_weight), _features(sensitive_features)


def group_min(
    metric: str,
    y_true: IntoExpr,
    y_pred: IntoExpr,
    *,
    sensitive_features: SensitiveFeatures,
    sample_weight: IntoExpr | None = None,
    pos_label: Any = 1,
) -> pl.Expr:
    """Smallest value of ``metric`` over the groups (fairlearn's ``MetricFrame.group_min()``).

    Parameters
    ----------
    metric
        A name in :data:`EXPR_METRICS` or an alias (``"recall"``, ...).
    y_true, y_pred, sensitive_features, sample_weight, pos_label
        As in :func:`group_difference`.

    Returns
    -------
    pl.Expr
        Float64 aggregation named ``"<metric>_group_min"``; null if any group's value is undefined
        (fairlearn counts an undefined TPR/FPR as 0.0).

    Raises
    ------
    PolfairError
        Unknown ``metric``, missing ``sensitive_features``, ``pos_label=None``.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"y": [1, 1, 1, 1], "p": [1, 0, 1, 1], "g": ["a", "a", "b", "b"]})
    >>> df.select(group_min("recall", "y", "p", sensitive_features="g")).item()
    0.5
    """
    name = _resolve(metric)
    rows, sf = _setup(y_true, y_pred, sensitive_features, pos_label, sample_weight)
    v = _value(name, rows, sf)
    return pl.when(_all_defined(v)).then(v.min()).alias(f"{name}_group_min")


def group_max(
    metric: str,
    y_true: IntoExpr,
    y_pred: IntoExpr,
    *,
    sensitive_features: SensitiveFeatures,
    sample_weight: IntoExpr | None = None,
    pos_label: Any = 1,
) -> pl.Expr:
    """Largest value of ``metric`` over the groups (fairlearn's ``MetricFrame.group_max()``).

    Parameters
    ----------
    metric
        A name in :data:`EXPR_METRICS` or an alias.
    y_true, y_pred, sensitive_features, sample_weight, pos_label
        As in :func:`group_difference`.

    Returns
    -------
    pl.Expr
        Float64 aggregation named ``"<metric>_group_max"``; null if any group's value is undefined.

    Raises
    ------
    PolfairError
        Unknown ``metric``, missing ``sensitive_features``, ``pos_label=None``.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"y": [1, 1, 1, 1], "p": [1, 0, 1, 1], "g": ["a", "a", "b", "b"]})
    >>> df.select(group_max("recall", "y", "p", sensitive_features="g")).item()
    1.0
    """
    name = _resolve(metric)
    rows, sf = _setup(y_true, y_pred, sensitive_features, pos_label, sample_weight)
    v = _value(name, rows, sf)
    return pl.when(_all_defined(v)).then(v.max()).alias(f"{name}_group_max")


def group_difference(
    metric: str,
    y_true: IntoExpr,
    y_pred: IntoExpr,
    *,
    sensitive_features: SensitiveFeatures,
    method: Method = "between_groups",
    sample_weight: IntoExpr | None = None,
    pos_label: Any = 1,
) -> pl.Expr:
    """Largest gap in ``metric`` between groups (fairlearn's ``MetricFrame.difference(method)``).

    ``between_groups``: ``max_g m_g − min_g m_g``. ``to_overall``: ``max_g |m_g − m_overall|``.

    Parameters
    ----------
    metric
        A name in :data:`EXPR_METRICS` or an alias.
    method
        ``"between_groups"`` (default) or ``"to_overall"``.
    y_true, y_pred
        Column names or expressions of the true and predicted labels (see :func:`selection_rate`).
    sensitive_features
        Column name, expression, or a sequence of them; the groups are their observed
        combinations (intersections), a null value being its own group.
    sample_weight
        Optional column name or expression of per-row weights.
    pos_label
        The positive label; default ``1``.

    Returns
    -------
    pl.Expr
        Float64 aggregation named ``"<metric>_difference"``, ≥ 0 (rates: in [0, 1]). Null if any
        group's value (or, for ``to_overall``, the overall value) is undefined.

    Raises
    ------
    PolfairError
        Unknown ``metric`` or ``method``, missing ``sensitive_features``, ``pos_label=None``.

    Notes
    -----
    With control features, group the query by them: ``df.group_by("cf").agg(group_difference(...))``
    equals ``MetricFrame(..., control_features=cf).difference()``. Source: fairlearn 0.15.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"y": [1, 0, 1, 0], "p": [1, 1, 0, 1], "g": ["a", "a", "b", "b"]})
    >>> df.select(group_difference("selection_rate", "y", "p", sensitive_features="g")).item()
    0.5
    >>> df.select(group_difference("selection_rate", "y", "p", sensitive_features="g",
    ...                            method="to_overall")).item()
    0.25
    """
    name = _resolve(metric)
    rows, sf = _setup(y_true, y_pred, sensitive_features, pos_label, sample_weight, method)
    return _difference(_value(name, rows, sf), _value(name, rows), method).alias(f"{name}_difference")


def group_ratio(
    metric: str,
    y_true: IntoExpr,
    y_pred: IntoExpr,
    *,
    sensitive_features: SensitiveFeatures,
    method: Method = "between_groups",
    sample_weight: IntoExpr | None = None,
    pos_label: Any = 1,
) -> pl.Expr:
    """Smallest ratio of ``metric`` between groups (fairlearn's ``MetricFrame.ratio(method)``).

    ``between_groups``: ``min_g m_g / max_g m_g``. ``to_overall``: ``min_g r_g`` with
    ``r_g = m_g / m_overall``, replaced by ``1 / r_g`` when above 1 (always ≤ 1).

    Parameters
    ----------
    metric
        A name in :data:`EXPR_METRICS` or an alias.
    method
        ``"between_groups"`` (default) or ``"to_overall"``.
    y_true, y_pred
        Column names or expressions of the true and predicted labels (see :func:`selection_rate`).
    sensitive_features
        Column name, expression, or a sequence of them; the groups are their observed
        combinations (intersections), a null value being its own group.
    sample_weight
        Optional column name or expression of per-row weights.
    pos_label
        The positive label; default ``1``.

    Returns
    -------
    pl.Expr
        Float64 aggregation named ``"<metric>_ratio"``, in [0, 1]. Null if any group's value is
        undefined, or the divisor (largest group value, or overall value) is 0 (fairlearn: NaN).

    Raises
    ------
    PolfairError
        Unknown ``metric`` or ``method``, missing ``sensitive_features``, ``pos_label=None``.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"y": [1, 0, 1, 0], "p": [1, 1, 0, 1], "g": ["a", "a", "b", "b"]})
    >>> df.select(group_ratio("selection_rate", "y", "p", sensitive_features="g")).item()
    0.5
    >>> round(df.select(group_ratio("selection_rate", "y", "p", sensitive_features="g",
    ...                             method="to_overall")).item(), 4)
    0.6667
    """
    name = _resolve(metric)
    rows, sf = _setup(y_true, y_pred, sensitive_features, pos_label, sample_weight, method)
    return _ratio(_value(name, rows, sf), _value(name, rows), method).alias(f"{name}_ratio")


# --------------------------------------------------------------------------------------------
# fairlearn's named disparity functions
# --------------------------------------------------------------------------------------------


def _multiclass_dpd(
    y_true: IntoExpr, y_pred: IntoExpr, sf: list[pl.Expr], sample_weight: IntoExpr | None
) -> pl.Expr:
    """ignite's DemographicParityDifference: per class max−min of group selection rates, max over classes."""
    yp = as_expr(y_pred, "y_pred")
    w = pl.lit(1.0) if sample_weight is None else as_expr(sample_weight, "sample_weight").cast(pl.Float64)
    valid = as_expr(y_true, "y_true").is_not_null() & yp.is_not_null() & w.is_not_null()
    vw = pl.when(valid).then(w)
    # per valid row: the share of its predicted class c within its group g, SR_gc
    share = rate(vw.sum().over([*sf, yp]), vw.sum().over(sf)).filter(valid)
    cls = yp.filter(valid)
    # Sort the valid rows by (class, share): each class is then one run, its first row holds
    # min_g SR_gc and its last row max_g SR_gc. (A window over the class would re-evaluate the
    # inner group windows inside each class, so the runs are found by sorting instead.)
    order = [cls, share]
    s, c = share.sort_by(order), cls.sort_by(order)
    first = (c != c.shift(1)).fill_null(True)
    last = (c != c.shift(-1)).fill_null(True)
    # groups predicting each class: new (class, group) pairs, counted per run
    new_pair = pl.struct([yp.alias("__pf_c"), *(f.alias(f"__pf_s{i}") for i, f in enumerate(sf))])
    runs = new_pair.filter(valid).is_first_distinct().sort_by(order).cast(pl.Int64).cum_sum().filter(last)
    groups_with_class = runs.diff().fill_null(runs.first())
    n_groups = pl.struct([f.alias(f"__pf_s{i}") for i, f in enumerate(sf)]).filter(valid).n_unique()
    # a group that never predicts the class has rate 0 for it
    low = pl.when(groups_with_class == n_groups).then(s.filter(first)).otherwise(0.0)
    per_class = s.filter(last) - low
    return pl.when(share.null_count() == 0).then(per_class.max())


def demographic_parity_difference(
    y_true: IntoExpr,
    y_pred: IntoExpr,
    *,
    sensitive_features: SensitiveFeatures,
    method: Method = "between_groups",
    sample_weight: IntoExpr | None = None,
    pos_label: Any = 1,
) -> pl.Expr:
    """Demographic parity difference: the largest gap in selection rate between groups.

    fairlearn's ``demographic_parity_difference``: ``max_g SR_g − min_g SR_g`` (``between_groups``)
    or ``max_g |SR_g − SR_overall|`` (``to_overall``), with ``SR = P(ŷ = pos_label)``.

    With ``pos_label=None`` every class is compared (multiclass, pytorch-ignite's
    ``DemographicParityDifference``): for each class ``c`` the gap ``max_g SR_gc − min_g SR_gc`` of the
    per-group rates ``SR_gc = P(ŷ = c | g)`` (0 for a group that never predicts ``c``), then the
    largest gap over the classes. For 0/1 predictions this equals the binary value.

    Parameters
    ----------
    y_true, y_pred
        Column names or expressions of the true and predicted labels (see :func:`selection_rate`).
    sensitive_features
        Column name, expression, or a sequence of them; the groups are their observed
        combinations (intersections), a null value being its own group.
    sample_weight
        Optional column name or expression of per-row weights.
    pos_label
        The positive label; default ``1``. ``None``: every class (``between_groups`` only).
    method
        ``"between_groups"`` (default) or ``"to_overall"``.

    Returns
    -------
    pl.Expr
        Float64 aggregation named ``"demographic_parity_difference"``, in [0, 1]; 0 means equal
        selection rates. Null if a group has no valid row weight (zero total weight).

    Raises
    ------
    PolfairError
        Unknown ``method``; ``method="to_overall"`` with ``pos_label=None``; missing
        ``sensitive_features``.

    Notes
    -----
    ``y_true`` only decides which rows are valid (a null label drops the row), as the other
    metrics; fairlearn ignores it. Source: fairlearn 0.15; ignite 0.5.4 for ``pos_label=None``.

    Examples
    --------
    >>> import polars as pl
    >>> import polfair.compat.fairlearn as pfx
    >>> df = pl.DataFrame({"y": [1, 0, 1, 0, 1, 1], "p": [1, 1, 0, 1, 0, 0],
    ...                    "sex": ["f", "f", "f", "m", "m", "m"], "model": ["a"] * 3 + ["b"] * 3})
    >>> df.select(pfx.demographic_parity_difference("y", "p", sensitive_features="sex")).item()
    0.333...
    >>> mc = pl.DataFrame({"y": [0, 1, 2, 0], "p": [0, 1, 0, 2], "g": ["a", "a", "b", "b"]})
    >>> mc.select(pfx.demographic_parity_difference("y", "p", sensitive_features="g", pos_label=None)).item()
    0.5
    """
    _check_choice("method", method, ("between_groups", "to_overall"))
    if pos_label is None:
        if method != "between_groups":
            msg = "pos_label=None (every class compared) supports method='between_groups' only"
            raise PolfairError(msg)
        return _multiclass_dpd(y_true, y_pred, _features(sensitive_features), sample_weight).alias(
            "demographic_parity_difference"
        )
    return group_difference(
        "selection_rate", y_true, y_pred, sensitive_features=sensitive_features, method=method,
        sample_weight=sample_weight, pos_label=pos_label,
    ).alias("demographic_parity_difference")  # fmt: skip


def demographic_parity_ratio(
    y_true: IntoExpr,
    y_pred: IntoExpr,
    *,
    sensitive_features: SensitiveFeatures,
    method: Method = "between_groups",
    sample_weight: IntoExpr | None = None,
    pos_label: Any = 1,
) -> pl.Expr:
    """Demographic parity ratio: the smallest ratio of selection rates between groups.

    fairlearn's ``demographic_parity_ratio``: ``min_g SR_g / max_g SR_g`` (``between_groups``) or
    ``min_g min(SR_g/SR, SR/SR_g)`` against the overall rate ``SR`` (``to_overall``).

    Parameters
    ----------
    y_true, y_pred
        Column names or expressions of the true and predicted labels (see :func:`selection_rate`).
    sensitive_features
        Column name, expression, or a sequence of them; the groups are their observed
        combinations (intersections), a null value being its own group.
    sample_weight
        Optional column name or expression of per-row weights.
    pos_label
        The positive label; default ``1``.
    method
        ``"between_groups"`` (default) or ``"to_overall"``.

    Returns
    -------
    pl.Expr
        Float64 aggregation named ``"demographic_parity_ratio"``, in [0, 1]; 1 means equal rates.
        Null when every group's selection rate is 0 (fairlearn: NaN).

    Raises
    ------
    PolfairError
        Unknown ``method``, missing ``sensitive_features``, ``pos_label=None``.

    Examples
    --------
    >>> import polars as pl
    >>> import polfair.compat.fairlearn as pfx
    >>> df = pl.DataFrame({"y": [1, 0, 1, 0], "p": [1, 1, 0, 1], "g": ["a", "a", "b", "b"]})
    >>> df.select(pfx.demographic_parity_ratio("y", "p", sensitive_features="g")).item()
    0.5
    """
    return group_ratio(
        "selection_rate", y_true, y_pred, sensitive_features=sensitive_features, method=method,
        sample_weight=sample_weight, pos_label=pos_label,
    ).alias("demographic_parity_ratio")  # fmt: skip


def _combine(a: pl.Expr, b: pl.Expr, agg: str, worst: Callable[..., pl.Expr]) -> pl.Expr:
    both = a.is_not_null() & b.is_not_null()
    return pl.when(both).then(worst(a, b) if agg == "worst_case" else (a + b) / 2.0)


def equalized_odds_difference(
    y_true: IntoExpr,
    y_pred: IntoExpr,
    *,
    sensitive_features: SensitiveFeatures,
    method: Method = "between_groups",
    sample_weight: IntoExpr | None = None,
    agg: Agg = "worst_case",
    pos_label: Any = 1,
) -> pl.Expr:
    """Equalized odds difference: the larger (or mean) of the TPR and FPR group differences.

    fairlearn's ``equalized_odds_difference``: with ``D(m)`` the :func:`group_difference` of a
    metric, ``max(D(TPR), D(FPR))`` for ``agg="worst_case"``, ``(D(TPR) + D(FPR)) / 2`` for
    ``agg="mean"``.

    Parameters
    ----------
    y_true, y_pred
        Column names or expressions of the true and predicted labels (see :func:`selection_rate`).
    sensitive_features
        Column name, expression, or a sequence of them; the groups are their observed
        combinations (intersections), a null value being its own group.
    sample_weight
        Optional column name or expression of per-row weights.
    pos_label
        The positive label; default ``1``.
    method
        ``"between_groups"`` (default) or ``"to_overall"``.
    agg
        ``"worst_case"`` (default) or ``"mean"``.

    Returns
    -------
    pl.Expr
        Float64 aggregation named ``"equalized_odds_difference"``, in [0, 1]. Null when a group has
        no positives or no negatives (its TPR or FPR is undefined); fairlearn counts that rate as 0.

    Raises
    ------
    PolfairError
        Unknown ``method`` or ``agg``, missing ``sensitive_features``, ``pos_label=None``.

    Examples
    --------
    >>> import polars as pl
    >>> import polfair.compat.fairlearn as pfx
    >>> df = pl.DataFrame({"y": [1, 1, 0, 0, 1, 1, 0, 0], "p": [1, 1, 0, 1, 1, 0, 0, 0],
    ...                    "g": ["a"] * 4 + ["b"] * 4})
    >>> df.select(pfx.equalized_odds_difference("y", "p", sensitive_features="g")).item()
    0.5
    >>> df.select(pfx.equalized_odds_difference("y", "p", sensitive_features="g", agg="mean")).item()
    0.5
    """
    _check_choice("agg", agg, ("worst_case", "mean"))
    kw = dict(sensitive_features=sensitive_features, method=method, sample_weight=sample_weight, pos_label=pos_label)
    tpr = group_difference("true_positive_rate", y_true, y_pred, **kw)  # type: ignore[arg-type]
    fpr = group_difference("false_positive_rate", y_true, y_pred, **kw)  # type: ignore[arg-type]
    return _combine(tpr, fpr, agg, pl.max_horizontal).alias("equalized_odds_difference")


def equalized_odds_ratio(
    y_true: IntoExpr,
    y_pred: IntoExpr,
    *,
    sensitive_features: SensitiveFeatures,
    method: Method = "between_groups",
    sample_weight: IntoExpr | None = None,
    agg: Agg = "worst_case",
    pos_label: Any = 1,
) -> pl.Expr:
    """Equalized odds ratio: the smaller (or mean) of the TPR and FPR group ratios.

    fairlearn's ``equalized_odds_ratio``: with ``R(m)`` the :func:`group_ratio` of a metric,
    ``min(R(TPR), R(FPR))`` for ``agg="worst_case"``, ``(R(TPR) + R(FPR)) / 2`` for ``agg="mean"``.

    Parameters
    ----------
    y_true, y_pred
        Column names or expressions of the true and predicted labels (see :func:`selection_rate`).
    sensitive_features
        Column name, expression, or a sequence of them; the groups are their observed
        combinations (intersections), a null value being its own group.
    sample_weight
        Optional column name or expression of per-row weights.
    pos_label
        The positive label; default ``1``.
    method
        ``"between_groups"`` (default) or ``"to_overall"``.
    agg
        ``"worst_case"`` (default) or ``"mean"``.

    Returns
    -------
    pl.Expr
        Float64 aggregation named ``"equalized_odds_ratio"``, in [0, 1]. Null when a group's TPR or
        FPR is undefined or a divisor is 0 (fairlearn: 0.0 or NaN).

    Raises
    ------
    PolfairError
        Unknown ``method`` or ``agg``, missing ``sensitive_features``, ``pos_label=None``.

    Examples
    --------
    >>> import polars as pl
    >>> import polfair.compat.fairlearn as pfx
    >>> df = pl.DataFrame({"y": [1, 1, 0, 0, 1, 1, 0, 0], "p": [1, 1, 0, 1, 1, 0, 1, 0],
    ...                    "g": ["a"] * 4 + ["b"] * 4})
    >>> df.select(pfx.equalized_odds_ratio("y", "p", sensitive_features="g")).item()
    0.5
    """
    _check_choice("agg", agg, ("worst_case", "mean"))
    kw = dict(sensitive_features=sensitive_features, method=method, sample_weight=sample_weight, pos_label=pos_label)
    tpr = group_ratio("true_positive_rate", y_true, y_pred, **kw)  # type: ignore[arg-type]
    fpr = group_ratio("false_positive_rate", y_true, y_pred, **kw)  # type: ignore[arg-type]
    return _combine(tpr, fpr, agg, pl.min_horizontal).alias("equalized_odds_ratio")


def equal_opportunity_difference(
    y_true: IntoExpr,
    y_pred: IntoExpr,
    *,
    sensitive_features: SensitiveFeatures,
    method: Method = "between_groups",
    sample_weight: IntoExpr | None = None,
    pos_label: Any = 1,
) -> pl.Expr:
    """Equal opportunity difference: the largest gap in true positive rate between groups.

    fairlearn's ``equal_opportunity_difference`` (since 0.11): :func:`group_difference` of
    ``true_positive_rate``. Unsigned, unlike aif360's (group − privileged) of the same name, which
    the report gives per group.

    Parameters
    ----------
    y_true, y_pred
        Column names or expressions of the true and predicted labels (see :func:`selection_rate`).
    sensitive_features
        Column name, expression, or a sequence of them; the groups are their observed
        combinations (intersections), a null value being its own group.
    sample_weight
        Optional column name or expression of per-row weights.
    pos_label
        The positive label; default ``1``.
    method
        ``"between_groups"`` (default) or ``"to_overall"``.

    Returns
    -------
    pl.Expr
        Float64 aggregation named ``"equal_opportunity_difference"``, in [0, 1]. Null when a group
        has no positives (fairlearn counts its TPR as 0.0).

    Raises
    ------
    PolfairError
        Unknown ``method``, missing ``sensitive_features``, ``pos_label=None``.

    Examples
    --------
    >>> import polars as pl
    >>> import polfair.compat.fairlearn as pfx
    >>> df = pl.DataFrame({"y": [1, 1, 1, 1], "p": [1, 0, 1, 1], "g": ["a", "a", "b", "b"]})
    >>> df.select(pfx.equal_opportunity_difference("y", "p", sensitive_features="g")).item()
    0.5
    """
    return group_difference(
        "true_positive_rate", y_true, y_pred, sensitive_features=sensitive_features, method=method,
        sample_weight=sample_weight, pos_label=pos_label,
    ).alias("equal_opportunity_difference")  # fmt: skip


def equal_opportunity_ratio(
    y_true: IntoExpr,
    y_pred: IntoExpr,
    *,
    sensitive_features: SensitiveFeatures,
    method: Method = "between_groups",
    sample_weight: IntoExpr | None = None,
    pos_label: Any = 1,
) -> pl.Expr:
    """Equal opportunity ratio: the smallest ratio of true positive rates between groups.

    fairlearn's ``equal_opportunity_ratio`` (since 0.11): :func:`group_ratio` of
    ``true_positive_rate``.

    Parameters
    ----------
    y_true, y_pred
        Column names or expressions of the true and predicted labels (see :func:`selection_rate`).
    sensitive_features
        Column name, expression, or a sequence of them; the groups are their observed
        combinations (intersections), a null value being its own group.
    sample_weight
        Optional column name or expression of per-row weights.
    pos_label
        The positive label; default ``1``.
    method
        ``"between_groups"`` (default) or ``"to_overall"``.

    Returns
    -------
    pl.Expr
        Float64 aggregation named ``"equal_opportunity_ratio"``, in [0, 1]. Null when a group has
        no positives or every group's TPR is 0 (fairlearn: 0.0 or NaN).

    Raises
    ------
    PolfairError
        Unknown ``method``, missing ``sensitive_features``, ``pos_label=None``.

    Examples
    --------
    >>> import polars as pl
    >>> import polfair.compat.fairlearn as pfx
    >>> df = pl.DataFrame({"y": [1, 1, 1, 1], "p": [1, 0, 1, 1], "g": ["a", "a", "b", "b"]})
    >>> df.select(pfx.equal_opportunity_ratio("y", "p", sensitive_features="g")).item()
    0.5
    """
    return group_ratio(
        "true_positive_rate", y_true, y_pred, sensitive_features=sensitive_features, method=method,
        sample_weight=sample_weight, pos_label=pos_label,
    ).alias("equal_opportunity_ratio")  # fmt: skip
