"""fairlearn's named disparity functions: demographic parity, equalized odds, equal opportunity."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import polars as pl

from polfair.compat.fairlearn._rows import Agg, Method, SensitiveFeatures, check_choice, sensitive_exprs
from polfair.compat.fairlearn.group_aggregates import group_difference, group_ratio
from polfair.core._args import as_expr
from polfair.core._typing import IntoExpr
from polfair.core.metrics import rate
from polfair.exceptions import PolfairError

__all__ = [
    "demographic_parity_difference",
    "demographic_parity_ratio",
    "equal_opportunity_difference",
    "equal_opportunity_ratio",
    "equalized_odds_difference",
    "equalized_odds_ratio",
]


def _multiclass_dpd(
    y_true: IntoExpr, y_pred: IntoExpr, sf: list[pl.Expr], sample_weight: IntoExpr | None
) -> pl.Expr:
    """Ignite's DemographicParityDifference: per class max−min of group selection rates, max over classes."""
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
    check_choice("method", method, ("between_groups", "to_overall"))
    if pos_label is None:
        if method != "between_groups":
            msg = "pos_label=None (every class compared) supports method='between_groups' only"
            raise PolfairError(msg)
        return _multiclass_dpd(y_true, y_pred, sensitive_exprs(sensitive_features), sample_weight).alias(
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
    check_choice("agg", agg, ("worst_case", "mean"))
    kw = dict(sensitive_features=sensitive_features, method=method, sample_weight=sample_weight, pos_label=pos_label)
    tpr = group_difference("true_positive_rate", y_true, y_pred, **kw)
    fpr = group_difference("false_positive_rate", y_true, y_pred, **kw)
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
    check_choice("agg", agg, ("worst_case", "mean"))
    kw = dict(sensitive_features=sensitive_features, method=method, sample_weight=sample_weight, pos_label=pos_label)
    tpr = group_ratio("true_positive_rate", y_true, y_pred, **kw)
    fpr = group_ratio("false_positive_rate", y_true, y_pred, **kw)
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
