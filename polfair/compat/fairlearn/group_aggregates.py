"""Group-wise aggregates of any metric: fairlearn ``MetricFrame``'s group_min, group_max, difference, ratio."""

from __future__ import annotations

from typing import Any

import polars as pl

from polfair.compat.fairlearn._rows import (
    Method,
    Rows,
    SensitiveFeatures,
    check_choice,
    metric_value,
    resolve_metric,
    sensitive_exprs,
)
from polfair.core._typing import IntoExpr
from polfair.core.metrics import between_groups_difference, between_groups_ratio, rate

__all__ = ["group_difference", "group_max", "group_min", "group_ratio"]


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
) -> tuple[Rows, list[pl.Expr]]:  # fmt: skip
    check_choice("method", method, ("between_groups", "to_overall"))
    return Rows(y_true, y_pred, pos_label, sample_weight), sensitive_exprs(sensitive_features)


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
    name = resolve_metric(metric)
    rows, sf = _setup(y_true, y_pred, sensitive_features, pos_label, sample_weight)
    v = metric_value(name, rows, sf)
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
    name = resolve_metric(metric)
    rows, sf = _setup(y_true, y_pred, sensitive_features, pos_label, sample_weight)
    v = metric_value(name, rows, sf)
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
    name = resolve_metric(metric)
    rows, sf = _setup(y_true, y_pred, sensitive_features, pos_label, sample_weight, method)
    return _difference(metric_value(name, rows, sf), metric_value(name, rows), method).alias(f"{name}_difference")


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
    name = resolve_metric(metric)
    rows, sf = _setup(y_true, y_pred, sensitive_features, pos_label, sample_weight, method)
    return _ratio(metric_value(name, rows, sf), metric_value(name, rows), method).alias(f"{name}_ratio")
