"""Group-wise aggregates of any metric: fairlearn ``MetricFrame``'s group_min, group_max, difference, ratio.

Given column names or expressions each function returns an aggregation expression; given data
(lists, arrays, Series, and for ``sensitive_features`` also 2-D arrays, DataFrames or dicts), a
number, as ``MetricFrame(...).group_min()`` and the others return.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import polars as pl

from polfair.compat.fairlearn._inputs import Dual, accepts_data
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


def _per_group(
    metric: str, y_true: IntoExpr, y_pred: IntoExpr, sensitive_features: SensitiveFeatures | None,
    sample_weight: IntoExpr | None, pos_label: Any,
) -> tuple[str, pl.Expr, pl.Expr]:  # fmt: skip
    """The metric's canonical name, its value per group (a window over the groups) and overall."""
    name = resolve_metric(metric)
    rows = Rows(y_true, y_pred, pos_label, sample_weight)
    return name, metric_value(name, rows, sensitive_exprs(sensitive_features)), metric_value(name, rows)


_PARAMETERS = """
    Parameters
    ----------
    metric
        A name in :data:`EXPR_METRICS` (``"selection_rate"``, ``"true_positive_rate"``, ...) or an
        alias (``"recall"``, ``"precision"``, ...).
    y_true, y_pred
        Column names or expressions of the true and predicted labels; or data, one value per row
        (lists, NumPy arrays, pandas or Polars Series), as in :func:`selection_rate`.
    sensitive_features
        Column name, expression, or a sequence of them; or data: one value per row, or a 2-D array,
        DataFrame or dict of columns (one feature per column). The groups are the observed
        combinations (intersections), a null value being its own group.{method}
    sample_weight
        Optional per-row weights: a column name or expression, or data.
    pos_label
        The positive label; default ``1``."""

_METHOD = """
    method
        ``"between_groups"`` (default) or ``"to_overall"``."""


def _aggregate(kind: str, title: str, formula: str, returns: str, examples: str) -> Dual:
    """The public function ``group_<kind>`` (min, max) or ``group_<kind>`` (difference, ratio)."""
    suffix = f"group_{kind}" if kind in ("min", "max") else kind
    combine = _difference if kind == "difference" else _ratio

    def extremum(metric: str, y_true: IntoExpr, y_pred: IntoExpr, *, sensitive_features: SensitiveFeatures,
                 sample_weight: IntoExpr | None = None, pos_label: Any = 1) -> pl.Expr:  # fmt: skip
        name, v, _ = _per_group(metric, y_true, y_pred, sensitive_features, sample_weight, pos_label)
        return pl.when(_all_defined(v)).then(v.min() if kind == "min" else v.max()).alias(f"{name}_{suffix}")

    def spread(metric: str, y_true: IntoExpr, y_pred: IntoExpr, *, sensitive_features: SensitiveFeatures,
               method: Method = "between_groups", sample_weight: IntoExpr | None = None,
               pos_label: Any = 1) -> pl.Expr:  # fmt: skip
        check_choice("method", method, ("between_groups", "to_overall"))
        name, v, overall = _per_group(metric, y_true, y_pred, sensitive_features, sample_weight, pos_label)
        return combine(v, overall, method).alias(f"{name}_{suffix}")

    build: Callable[..., pl.Expr] = extremum if kind in ("min", "max") else spread
    build.__name__ = build.__qualname__ = f"group_{kind}"
    build.__module__ = __name__
    build.__doc__ = f"""{title}

    {formula}
{_PARAMETERS.format(method="" if kind in ("min", "max") else _METHOD)}

    Returns
    -------
    pl.Expr or float
        With names or expressions: a Float64 aggregation named ``"<metric>_{suffix}"``; {returns}
        With data: its value, a ``numpy.float64`` (NaN where undefined).

    Raises
    ------
    PolfairError
        Unknown ``metric``{" or ``method``" if kind in ("difference", "ratio") else ""}, missing
        ``sensitive_features``, ``pos_label=None``; data of different lengths.
    TypeError
        A column argument is neither a name, an expression nor data, or names and data are mixed.

    Notes
    -----
    With control features, group the query by them: ``df.group_by("cf").agg(group_{kind}(...))``
    equals fairlearn's ``MetricFrame(..., control_features=cf)`` aggregate. Source: fairlearn 0.15.

    Examples
    --------
    >>> import polars as pl
    >>> from polfair.compat.fairlearn import group_{kind}
{examples}
    """
    return accepts_data(build)


group_min = _aggregate(
    "min",
    "Smallest value of ``metric`` over the groups (fairlearn's ``MetricFrame.group_min()``).",
    "``min_g m_g``.",
    "null if any group's value is undefined (fairlearn counts an undefined TPR/FPR as 0.0).",
    """    >>> df = pl.DataFrame({"y": [1, 1, 1, 1], "p": [1, 0, 1, 1], "g": ["a", "a", "b", "b"]})
    >>> df.select(group_min("recall", "y", "p", sensitive_features="g")).item()
    0.5
    >>> group_min("recall", [1, 1, 1, 1], [1, 0, 1, 1], sensitive_features=["a", "a", "b", "b"])
    np.float64(0.5)""",
)
group_max = _aggregate(
    "max",
    "Largest value of ``metric`` over the groups (fairlearn's ``MetricFrame.group_max()``).",
    "``max_g m_g``.",
    "null if any group's value is undefined.",
    """    >>> sex, race = ["f", "f", "m", "m", "m"], ["x", "y", "x", "y", "y"]
    >>> group_max("selection_rate", [1, 0, 1, 0, 1], [1, 1, 0, 0, 1], sensitive_features={"sex": sex, "race": race})
    np.float64(1.0)""",
)
group_difference = _aggregate(
    "difference",
    "Largest gap in ``metric`` between groups (fairlearn's ``MetricFrame.difference(method)``).",
    "``between_groups``: ``max_g m_g − min_g m_g``. ``to_overall``: ``max_g |m_g − m_overall|``.",
    "≥ 0 (rates: in [0, 1]). Null if any group's value (or, for ``to_overall``, the overall value) is "
    "undefined.",
    """    >>> df = pl.DataFrame({"y": [1, 0, 1, 0], "p": [1, 1, 0, 1], "g": ["a", "a", "b", "b"]})
    >>> df.select(group_difference("selection_rate", "y", "p", sensitive_features="g")).item()
    0.5
    >>> df.select(group_difference("selection_rate", "y", "p", sensitive_features="g",
    ...                            method="to_overall")).item()
    0.25""",
)
group_ratio = _aggregate(
    "ratio",
    "Smallest ratio of ``metric`` between groups (fairlearn's ``MetricFrame.ratio(method)``).",
    "``between_groups``: ``min_g m_g / max_g m_g``. ``to_overall``: ``min_g r_g`` with "
    "``r_g = m_g / m_overall``, replaced by ``1 / r_g`` when above 1 (always ≤ 1).",
    "in [0, 1]. Null if any group's value is undefined, or the divisor (largest group value, or overall "
    "value) is 0 (fairlearn: NaN).",
    """    >>> df = pl.DataFrame({"y": [1, 0, 1, 0], "p": [1, 1, 0, 1], "g": ["a", "a", "b", "b"]})
    >>> df.select(group_ratio("selection_rate", "y", "p", sensitive_features="g")).item()
    0.5
    >>> round(df.select(group_ratio("selection_rate", "y", "p", sensitive_features="g",
    ...                             method="to_overall")).item(), 4)
    0.6667""",
)
